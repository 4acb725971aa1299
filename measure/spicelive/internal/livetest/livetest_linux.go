package livetest

import (
	"os"
	"syscall"
	"testing"

	"github.com/shakenfist/quicbench/measure/spicelive/xsession"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
)

// Need skips a test that needs a live session where one cannot run (a
// program missing, or no way to build a link), and otherwise takes the
// live tests' lock until t ends (lock).
func Need(t *testing.T) {
	t.Helper()
	if miss := xsession.MissingPrograms(); miss != "" {
		t.Skip("no live SPICE session here: " + miss)
	}
	shapedlinktest.Need(t)
	lock(t)
}

// lock holds, until t ends, a lock every live test of the module's
// packages takes, so that live sessions of two test binaries never run at
// once and each test's check for programs left running sees only its own.
func lock(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile(lockPath(), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
}
