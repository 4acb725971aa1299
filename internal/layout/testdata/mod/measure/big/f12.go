package big

func f12() {}
