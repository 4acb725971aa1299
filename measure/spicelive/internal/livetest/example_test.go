package livetest

import (
	"fmt"
	"path/filepath"
)

// The lock Need takes, so that the live tests of every package run one at
// a time, lies in the system's temporary directory, under one name.
func Example() {
	fmt.Println(filepath.Base(lockPath()))
	// Output:
	// quicbench-live-test.lock
}
