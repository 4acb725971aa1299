package big

func f09() {}
