package gorun_test

import (
	"fmt"

	"github.com/shakenfist/quicbench/examples/internal/gorun"
)

// A command calls Follow first in main. go test starts a test binary as
// go run starts a command, a child of the go command, so here it follows.
func ExampleFollow() {
	fmt.Println(gorun.Follow())
	// Output: true
}
