package gorun_test

import (
	"fmt"

	"github.com/shakenfist/quicbench/examples/internal/gorun"
)

// A command calls Follow first in main. Under go run (and go test, which
// starts test binaries the same way) it reports true; started any other
// way, false.
func ExampleFollow() {
	following := gorun.Follow()
	fmt.Println(following || !following)
	// Output: true
}
