package lib_test

import "example.com/fixture/lib"

// One Example and other declarations but no tests: go doc shows the whole
// file, init included.
func init() { lib.Whole() }

func ExampleWhole() {}
