package livetest_test

import (
	"fmt"
	"path/filepath"

	"github.com/shakenfist/quicbench/measure/spicelive/internal/livetest"
)

// The lock the live tests of every package take lies in the system's
// temporary directory, under one name.
func ExampleLockPath() {
	fmt.Println(filepath.Base(livetest.LockPath()))
	// Output:
	// quicbench-live-test.lock
}
