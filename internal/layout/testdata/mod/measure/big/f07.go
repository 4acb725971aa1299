package big

func f07() {}
