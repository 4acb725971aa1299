package big

func f04() {}
