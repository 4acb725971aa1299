package big

func f14() {}
