package lib_test

import "example.com/fixture/lib"

func ExampleShown() { lib.Shown() }

func ExampleT() { _ = lib.ShownMakes().N }

// notShown names lib.NotShown outside any Example in a file of two, so go
// doc shows it with neither.
func notShown() { lib.NotShown() }
