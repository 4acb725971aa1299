package lib_test

import "example.com/fixture/lib"

func ExampleShown() { lib.Shown() }
