package cmdtest_test

import (
	"fmt"

	"github.com/shakenfist/quicbench/examples/internal/cmdtest"
)

// A Result prints as its exit code and what the command said on stderr,
// which is what a failing test wants to show.
func ExampleResult() {
	r := cmdtest.Result{Code: 1, Stderr: "calibrate: 1 of 1 measurements failed (profile 20:10)\n"}
	fmt.Println(r)
	// Output:
	// exit 1; stderr:
	// calibrate: 1 of 1 measurements failed (profile 20:10)
}
