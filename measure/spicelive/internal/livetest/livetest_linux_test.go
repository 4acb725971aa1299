package livetest

import (
	"os"
	"syscall"
	"testing"
)

// While a test holds the lock another holder cannot take it; once the
// test ends, it can.
func TestLockExcludes(t *testing.T) {
	t.Run("holder", func(t *testing.T) {
		lock(t)
		f, err := os.Open(lockPath())
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err == nil {
			t.Error("the lock was taken twice")
		}
	})
	f, err := os.Open(lockPath())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Errorf("the lock was kept after its test ended: %v", err)
	}
}
