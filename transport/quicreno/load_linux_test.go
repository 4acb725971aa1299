package quicreno

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// testLockPath is the lock that tests loading the controller, in any
// package, hold while it is registered, since only one can be.
var testLockPath = filepath.Join(os.TempDir(), "quicbench-quicreno-test.lock")

// lockForTest holds testLockPath until the test ends.
func lockForTest(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile(testLockPath, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
}

// loadForTest loads p, waiting while another test process holds the
// controller (packages' tests run in parallel), and skips where the
// kernel or the privilege does not allow it.
func loadForTest(t *testing.T, p Params) *Controller {
	t.Helper()
	if err := CheckLoad(); err != nil {
		t.Skipf("cannot load a BPF congestion control here: %v", err)
	}
	lockForTest(t)
	deadline := time.Now().Add(3 * time.Minute)
	for {
		c, err := Load(p)
		if err == nil {
			t.Cleanup(func() { c.Close() })
			return c
		}
		if !strings.Contains(err.Error(), "already registered") || time.Now().After(deadline) {
			t.Fatalf("Load: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func available(t *testing.T) []string {
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(b))
}

func TestLoadRegistersUntilClose(t *testing.T) {
	c := loadForTest(t, Defaults())
	if !slices.Contains(available(t), Name) {
		t.Fatalf("%s not in tcp_available_congestion_control after Load: %v", Name, available(t))
	}
	if _, err := Load(Defaults()); err == nil || !strings.Contains(err.Error(), "already registered") {
		t.Errorf("a second Load while registered: err %v, want one saying it is already registered", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// The kernel unregisters it once the link's last reference goes.
	deadline := time.Now().Add(5 * time.Second)
	for slices.Contains(available(t), Name) {
		if time.Now().After(deadline) {
			t.Fatalf("%s still registered 5 s after Close", Name)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}
