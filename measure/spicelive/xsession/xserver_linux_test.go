package xsession

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostXFiles lists the X sockets and lock files in the host's /tmp.
func hostXFiles(t *testing.T) []string {
	t.Helper()
	socks, _ := filepath.Glob("/tmp/.X11-unix/X*")
	locks, _ := filepath.Glob("/tmp/.X*-lock")
	return append(socks, locks...)
}

// TestXServersLeaveNothing: two X servers started side by side are both
// reached by their clients, put no socket or lock file in the host's /tmp
// while they run, and leave none when killed with SIGKILL (as a killed
// role's are, by their parent-death signal).
func TestXServersLeaveNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: each X server has a /tmp of its own (a mount namespace)")
	}
	for _, p := range []string{"Xvfb", "xdotool"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("%s is not installed (apt-get install xvfb xdotool)", p)
		}
	}
	before := hostXFiles(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var progs []*Program
	defer func() { StopAll(progs) }()
	for i := range 2 {
		logf, err := os.Create(filepath.Join(t.TempDir(), "xvfb.log"))
		if err != nil {
			t.Fatal(err)
		}
		defer logf.Close()
		p, display, err := StartXServer(ctx, "Xvfb", []string{"-screen", "0", "320x200x24", "-nolisten", "tcp"}, nil, logf)
		if err != nil {
			t.Fatalf("X server %d: %v", i, err)
		}
		progs = append(progs, p)
		if out, err := XTool(ctx, display, 10*time.Second, "xdotool", "getdisplaygeometry"); err != nil || strings.TrimSpace(out) != "320 200" {
			t.Errorf("X server %d on %s: its client said %q, %v; want 320 200", i, display, out, err)
		}
	}
	if now := hostXFiles(t); !slices.Equal(now, before) {
		t.Errorf("with two X servers running the host's /tmp holds %v, and held %v before: their files are not private", now, before)
	}
	for _, p := range progs {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
	if now := hostXFiles(t); !slices.Equal(now, before) {
		t.Errorf("after SIGKILL the host's /tmp holds %v, and held %v before", now, before)
	}
}
