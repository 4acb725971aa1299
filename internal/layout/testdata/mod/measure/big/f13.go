package big

func f13() {}
