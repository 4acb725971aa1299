package cmdtest

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
)

// Run runs the command (this test binary, copied where uid can read it)
// with args, as uid (0: as this process's user), in dir, and returns its
// output and exit code. It fails the test if the command could not be
// started or ran past two minutes.
func Run(t *testing.T, uid int, dir string, args ...string) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := Command(ctx, t, uid, dir, args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	r := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		r.Code = ee.ExitCode()
	default:
		t.Fatalf("running %s %q: %v\nstderr:\n%s", cmd.Path, args, err, r.Stderr)
	}
	return r
}

// Command prepares the command (this test binary, copied where uid can
// read it) with args, to run as uid (0: as this process's user) in dir, for
// a test that must start, signal or kill it itself. ctx kills it.
func Command(ctx context.Context, t *testing.T, uid int, dir string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, copyTestBinary(t), args...)
	cmd.Env = []string{envAsCommand + "=1", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + dir}
	cmd.Dir = dir
	if uid != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	}
	return cmd
}

// copyTestBinary copies the running test binary into a directory any user
// can read (go test's own is private to root).
func copyTestBinary(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(OpenDir(t, 0), "cmd.test")
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

// OpenDir makes a temporary directory that uid owns and everyone can enter,
// and removes it when the test ends.
func OpenDir(t *testing.T, uid int) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "quicbench-cmd-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, uid, uid); err != nil {
		t.Fatal(err)
	}
	return dir
}

// NeedUnprivileged skips unless this process can start one as Nobody and
// the host allows unprivileged user namespaces (as far as sysctls say).
func NeedUnprivileged(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to start the command as uid 65534 (nobody)")
	}
	for _, s := range []struct{ path, off string }{
		{"/proc/sys/user/max_user_namespaces", "0"},
		{"/proc/sys/kernel/unprivileged_userns_clone", "0"},
		{"/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1"},
	} {
		if b, err := os.ReadFile(s.path); err == nil && strings.TrimSpace(string(b)) == s.off {
			t.Skipf("unprivileged user namespaces are not allowed here (%s is %s)", s.path, s.off)
		}
	}
}

// SkipIfNoUserNS skips when the command's re-execution into a user
// namespace was refused by the host: not what the test is about.
func SkipIfNoUserNS(t *testing.T, r Result) {
	t.Helper()
	for _, s := range []string{"in a new user and network namespace failed", "re-executed into a user namespace but still lacks"} {
		if strings.Contains(r.Stderr, s) {
			t.Skipf("unprivileged user namespaces are not available here:\n%s", r.Stderr)
		}
	}
}

// NeedNoNetem skips unless this host can build links as root but has no
// kernel netem, so that every run with -backend netem fails.
func NeedNoNetem(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to build namespaces")
	}
	p, err := shapedlink.ParseProfile("10:100")
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	l, err := shapedlink.New(context.Background(), p, shapedlink.Options{Logger: quiet})
	if err != nil {
		t.Skipf("cannot build a link here: %v", err)
	}
	l.Close()
	l, err = shapedlink.New(context.Background(), p, shapedlink.Options{Backend: shapedlink.BackendNetem, Logger: quiet})
	if err == nil {
		l.Close()
		t.Skip("this kernel has netem, so -backend netem does not fail here")
	}
}
