//go:build unix

package results

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestWriteJSONShareable: records are readable by others (0644 under the
// usual umask), not 0600 as a temporary file would leave them.
func TestWriteJSONShareable(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	p := filepath.Join(t.TempDir(), "x.json")
	if err := WriteJSON(p, map[string]int{"a": 1}); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.Mode().Perm(); got != 0o644 {
		t.Errorf("mode %v, want 0644", got)
	}
}

// TestLockRefusesASecondHolder: a second lock on the same work directory is
// refused with the holder's pid, and granted once the first is released.
// flock locks belong to open file descriptions, so two opens in one process
// contend as two processes would.
func TestLockRefusesASecondHolder(t *testing.T) {
	dir := t.TempDir()
	release, err := Lock(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Lock(dir)
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock: %v, want ErrLocked", err)
	}
	if want := fmt.Sprintf("process %d", os.Getpid()); !strings.Contains(err.Error(), want) {
		t.Errorf("refusal does not name the holder (%s): %v", want, err)
	}
	release()
	release2, err := Lock(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	release2()
}
