package big

func f03() {}
