package tracetest_test

import (
	"fmt"
	"testing"

	"github.com/shakenfist/quicbench/internal/tracetest"
)

// recorder is a testing.TB that keeps the errors it is given.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// A trigger file holding only its comment passes; one with a trigger left
// behind fails the test.
func ExampleNoTrigger() {
	r := &recorder{}
	tracetest.NoTrigger(r, "# Available triggers:\n")
	tracetest.NoTrigger(r, "# Available triggers:\ntraceoff\n")
	fmt.Println(r.errs)
	// Output: [the trigger file has "traceoff"; want no trigger]
}
