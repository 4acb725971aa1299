package big

func f10() {}
