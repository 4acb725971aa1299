package main

import (
	"context"
	"encoding/json"
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

func TestMain(m *testing.M) {
	if os.Getenv(envAsCommand) != "" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// A short calibration: one profile, 20 echoes, two 600 ms bulk flows, 200
// datagrams for the loss figure and no sweep; a few seconds.
var shortRun = []string{"-profiles", "20:10", "-echoes", "20", "-bulk", "600ms", "-losspkts", "200", "-sweep", ""}

// TestUnprivilegedRun runs calibrate as nobody: it must re-execute itself
// into a user namespace of its own, measure the profile, and exit 0.
func TestUnprivilegedRun(t *testing.T) {
	needUnprivileged(t)
	dir := openDir(t, nobody)
	c := runCommand(t, nobody, dir, append([]string{"-json"}, shortRun...)...)
	skipIfNoUserNS(t, c)
	if c.code != 0 {
		t.Errorf("exit code %d, want 0; stderr:\n%s", c.code, c.stderr)
	}
	var rep Report
	if err := json.Unmarshal([]byte(c.stdout), &rep); err != nil {
		t.Fatalf("stdout is not a JSON report (%v):\n%s\nstderr:\n%s", err, c.stdout, c.stderr)
	}
	if len(rep.Results) != 1 {
		t.Fatalf("%d results, want 1", len(rep.Results))
	}
	r := rep.Results[0]
	if r.Error != "" {
		t.Errorf("profile %s failed: %s", r.Profile, r.Error)
	}
	if r.Backend == "" || r.Answered == 0 {
		t.Errorf("backend %q, %d of %d echoes answered: nothing was measured", r.Backend, r.Answered, r.Echoes)
	}
	if len(r.Bulk) != 2 {
		t.Fatalf("%d bulk flows, want 2", len(r.Bulk))
	}
	for _, b := range r.Bulk {
		if b.Error != "" || b.GoodputMbit <= 0 {
			t.Errorf("bulk %s: goodput %.2f Mbit/s, error %q", b.CC, b.GoodputMbit, b.Error)
		}
		t.Logf("bulk %s buffers %s goodput %.2f Mbit/s", b.CC, b.Buffers, b.GoodputMbit)
	}
}

// TestFailedMeasurementsExitNonZero calibrates with -backend netem on a
// kernel without netem: the profile cannot be measured, and the command
// must say so and exit 1.
func TestFailedMeasurementsExitNonZero(t *testing.T) {
	needNoNetem(t)
	c := runCommand(t, 0, openDir(t, 0), append([]string{"-backend", "netem"}, shortRun...)...)
	if c.code != 1 {
		t.Errorf("exit code %d, want 1", c.code)
	}
	if !strings.Contains(c.stderr, "1 of 1 measurements failed") {
		t.Errorf("stderr does not say how many measurements failed:\n%s", c.stderr)
	}
	if !strings.Contains(c.stdout, "sch_netem") {
		t.Errorf("the table does not carry the profile's error:\n%s", c.stdout)
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
