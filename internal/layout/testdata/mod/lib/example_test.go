package lib_test

import (
	"fmt"

	"example.com/fixture/lib"
)

func ExampleShown() { lib.Shown() }

func ExampleT() { _ = lib.ShownMakes().N }

// notShown names lib.NotShown outside any Example in a file of two, so go
// doc shows it with neither.
func notShown() { lib.NotShown() }

func ExampleLong() {
	for i := range 16 {
		fmt.Println(i)
	}
	// Output:
	// 0
	// 1
	// 2
	// 3
	// 4
	// 5
	// 6
	// 7
	// 8
	// 9
	// 10
	// 11
	// 12
	// 13
	// 14
	// 15
}
