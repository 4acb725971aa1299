package main

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/examples/internal/results"
	"github.com/shakenfist/quicbench/shapedlink"
)

// A short run: one QUIC run of 4 s moved at 2 s; about 10 s.
func shortRun(workdir string) []string {
	return []string{"-profile", "20:10", "-losses", "0", "-arms", "quic", "-repeats", "1",
		"-duration", "4s", "-warmup", "1s", "-change-at", "2s", "-timeout", "1s", "-probe-timeout", "2s",
		"-linger", "1s", "-workdir", workdir}
}

// records reads every pathchange record under workdir.
func records(t *testing.T, workdir string) []Record {
	t.Helper()
	var out []Record
	err := filepath.WalkDir(workdir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != recordFile {
			return err
		}
		var r Record
		if err := results.ReadJSON(p, &r); err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestUnprivilegedRun runs pathchange as nobody: it must re-execute itself
// into a user namespace of its own, measure the path change, and exit 0.
func TestUnprivilegedRun(t *testing.T) {
	needUnprivileged(t)
	dir := openDir(t, nobody)
	workdir := filepath.Join(dir, "results")
	c := runCommand(t, nobody, dir, shortRun(workdir)...)
	skipIfNoUserNS(t, c)
	if c.code != 0 {
		t.Errorf("exit code %d, want 0; stderr:\n%s", c.code, c.stderr)
	}
	recs := records(t, workdir)
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1; stderr:\n%s", len(recs), c.stderr)
	}
	if r := recs[0]; r.Failed != "" || !r.ChangeSeen {
		t.Errorf("failed %q, change seen %v: the run did not measure a path change; stderr:\n%s", r.Failed, r.ChangeSeen, c.stderr)
	}
	if !strings.Contains(c.stdout, "| make-first | 0% | quic |") {
		t.Errorf("no summary row on stdout:\n%s", c.stdout)
	}
}

// TestFailedRunsExitNonZero runs pathchange with -backend netem on a
// kernel without netem: no run can be measured, and the command must say
// so and exit 1.
func TestFailedRunsExitNonZero(t *testing.T) {
	needNoNetem(t)
	dir := openDir(t, 0)
	c := runCommand(t, 0, dir, append([]string{"-backend", "netem"}, shortRun(filepath.Join(dir, "results"))...)...)
	if c.code != 1 {
		t.Errorf("exit code %d, want 1; stderr:\n%s", c.code, c.stderr)
	}
	if !strings.Contains(c.stderr, "1 of 1 measurements failed") {
		t.Errorf("stderr does not say how many measurements failed:\n%s", c.stderr)
	}
	if recs := records(t, filepath.Join(dir, "results")); len(recs) != 1 || !strings.Contains(recs[0].Failed, "sch_netem") {
		t.Errorf("records %+v: want one, failed for want of netem", recs)
	}
}

// envAsCommand makes the test binary behave as the command itself: TestMain
// runs main with the binary's arguments as the command's flags. The tests
// below use it to run the real command, as root or as another user, without
// a separate build.
const envAsCommand = "QUICBENCH_TEST_AS_COMMAND"

// command is the result of one run of the command.
type command struct {
	stdout, stderr string
	code           int
}

// runCommand runs the command (this test binary, copied where uid can read
// it) with args, as uid (0: as this process's user), in dir, and returns
// its output and exit code.
func runCommand(t *testing.T, uid int, dir string, args ...string) command {
	t.Helper()
	bin := copyTestBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = []string{envAsCommand + "=1", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "HOME=" + dir}
	cmd.Dir = dir
	if uid != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	}
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	c := command{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		c.code = ee.ExitCode()
	default:
		t.Fatalf("running %s %q: %v\nstderr:\n%s", bin, args, err, c.stderr)
	}
	return c
}

// copyTestBinary copies the running test binary into a directory any user
// can read (go test's own is private to root).
func copyTestBinary(t *testing.T) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := openDir(t, 0)
	dst := filepath.Join(dir, "cmd.test")
	b, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return dst
}

// openDir makes a temporary directory that uid owns and everyone can
// enter, and removes it when the test ends.
func openDir(t *testing.T, uid int) string {
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

// nobody is the user the unprivileged runs are made as.
const nobody = 65534

// needUnprivileged skips unless this process can start one as nobody, and
// the host allows unprivileged user namespaces (as far as sysctls say).
func needUnprivileged(t *testing.T) {
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

// skipIfNoUserNS skips when the command's re-execution into a user
// namespace was refused by the host: not what the test is about.
func skipIfNoUserNS(t *testing.T, c command) {
	t.Helper()
	for _, s := range []string{"in a new user and network namespace failed", "re-executed into a user namespace but still lacks"} {
		if strings.Contains(c.stderr, s) {
			t.Skipf("unprivileged user namespaces are not available here:\n%s", c.stderr)
		}
	}
}

// needNoNetem skips unless this host can build links as root but has no
// kernel netem, so that every run with -backend netem fails.
func needNoNetem(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to build namespaces")
	}
	p, err := shapedlink.ParseProfile("10:100")
	if err != nil {
		t.Fatal(err)
	}
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

var quiet = slog.New(slog.DiscardHandler)
