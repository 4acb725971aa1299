// Command app uses lib.
package main

import (
	"fmt"

	"example.com/fixture/lib"
)

// Doer is done.
type Doer interface{ Do() }

// Helper is exported by a command, which nothing can import.
func Helper() {}

func main() {
	var d Doer = &lib.Impl{}
	d.Do()
	fmt.Println(lib.Used().N, lib.T{} == lib.T{})
}
