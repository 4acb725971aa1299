package files

func b() {
	if false {
		a()
	}
}
