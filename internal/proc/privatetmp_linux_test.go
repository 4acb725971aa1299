package proc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestStartPrivateTmp: the command sees an empty /tmp but for the
// directory kept, which it reads and writes as the host's; what it
// creates elsewhere in /tmp never reaches the host's.
func TestStartPrivateTmp(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a mount namespace and a tmpfs")
	}
	keep, err := os.MkdirTemp("/tmp", "quicbench-proc-keep-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(keep)
	if err := os.WriteFile(filepath.Join(keep, "in"), []byte("from the host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join("/tmp", filepath.Base(keep)+"-stray")
	defer os.Remove(stray)
	cmd := exec.Command("sh", "-c", `ls -A /tmp; cat "$1/in"; touch "$2"; echo back > "$1/out"`, "sh", keep, stray)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	release, err := StartPrivateTmp(cmd, keep)
	if errors.Is(err, unix.EPERM) {
		t.Skipf("no mount namespace here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	werr := cmd.Wait()
	release()
	release() // a second call is harmless
	want := filepath.Base(keep) + "\nfrom the host\n"
	if werr != nil || out.String() != want {
		t.Errorf("the command said %q (%v); want /tmp to hold only the kept directory, readable: %q", out.String(), werr, want)
	}
	if _, err := os.Stat(stray); err == nil {
		t.Errorf("%s, made in the private /tmp, is in the host's", stray)
	}
	if b, err := os.ReadFile(filepath.Join(keep, "out")); err != nil || string(b) != "back\n" {
		t.Errorf("what the command wrote into the kept directory: %q, %v", b, err)
	}
}
