package big

func f08() {}
