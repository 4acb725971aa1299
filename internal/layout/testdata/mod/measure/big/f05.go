package big

func f05() {}
