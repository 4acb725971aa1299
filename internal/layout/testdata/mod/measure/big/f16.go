package big

func f16() {}
