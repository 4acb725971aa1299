package tracetest

import (
	"os"
	"strings"
	"testing"
)

// lockFile is the file every caller of Lock locks.
const lockFile = "/run/quicbench-tracing-test.lock"

// Lock holds, until the test ends, the lock that every test changing the
// kernel's tracing takes, waiting for it if another test holds it.
func Lock(t testing.TB) {
	t.Helper()
	f, err := os.OpenFile(lockFile, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := flock(f); err != nil {
		f.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
}

// NoTrigger fails t if trigger, a trigger file's text, holds a trigger
// (a line that is not a comment).
func NoTrigger(t testing.TB, trigger string) {
	t.Helper()
	for _, line := range strings.Split(trigger, "\n") {
		if !strings.HasPrefix(line, "#") && strings.TrimSpace(line) != "" {
			t.Errorf("the trigger file has %q; want no trigger", line)
		}
	}
}
