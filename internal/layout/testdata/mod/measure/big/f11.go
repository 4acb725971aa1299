package big

func f11() {}
