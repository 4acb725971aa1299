package tracetest_test

import (
	"fmt"

	"github.com/shakenfist/quicbench/internal/tracetest"
)

// Every test that changes the kernel's tracing calls Lock first, and so
// takes this file's lock.
func ExampleLock() {
	fmt.Println(tracetest.LockFile)
	// Output: /run/quicbench-tracing-test.lock
}
