package files

func c() { a() }

var _ = c
