package big

func f15() {}
