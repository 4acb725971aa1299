package big

func f02() {}
