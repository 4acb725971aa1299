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
	"time"
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
	if !errors.Is(err, errLocked) {
		t.Fatalf("second lock: %v, want errLocked", err)
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

// TestReadJSONRefusesWhatIsNotARecord: a named pipe in a record's place
// is refused at once, not waited on; a link to /dev/zero is refused
// rather than read until memory runs out; a directory and a file over
// maxRecordBytes are refused, the cap stated in the error. Scan, which
// every reader of a work directory uses, refuses them the same way.
func TestReadJSONRefusesWhatIsNotARecord(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "dir.json")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.json")
	f, err := os.Create(huge)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: no disk is used, and nothing is read.
	if err := f.Truncate(maxRecordBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	for path, want := range map[string]string{
		fifo: "named pipe",
		zero: "character device",
		sub:  "directory",
		huge: "over the 1 GiB a record file may be",
	} {
		done := make(chan error, 1)
		go func() {
			var v map[string]any
			done <- ReadJSON(path, &v)
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v, want an error saying %q", filepath.Base(path), err, want)
			}
		case <-time.After(10 * time.Second):
			// Release the reader so the test can end.
			if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
			t.Errorf("%s: ReadJSON still waits after 10 s", filepath.Base(path))
		}
	}

	// The same through Scan, with the pipe where a run's record goes.
	work := t.TempDir()
	rd := filepath.Join(work, "80ms-10mbit_loss1_reno", "tcp", "r1")
	if err := os.MkdirAll(rd, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(rd, RunFile), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { _, err := Scan(work); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("Scan over a pipe: %v", err)
		}
	case <-time.After(10 * time.Second):
		if w, err := os.OpenFile(filepath.Join(rd, RunFile), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
		t.Error("Scan still waits on a pipe after 10 s")
	}
}
