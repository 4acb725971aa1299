package big

func f06() {}
