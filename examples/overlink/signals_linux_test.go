package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/examples/internal/cmdtest"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
)

// bound is how long a run that should end at once may take on a loaded
// machine: far less than the waits the tests below put in the way (100 s
// and more), far more than building a link and ending a command take.
const bound = 45 * time.Second

// overlinkRun is one overlink started by a test, with a token in its
// environment that every process of the run inherits.
type overlinkRun struct {
	cmd    *exec.Cmd
	token  string
	stderr *bufio.Reader
	cancel context.CancelFunc
	exited chan struct{}
}

// startOverlink starts overlink with args; the run is killed after bound.
func startOverlink(t *testing.T, args ...string) *overlinkRun {
	t.Helper()
	dir := cmdtest.OpenDir(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	r := &overlinkRun{cancel: cancel, exited: make(chan struct{})}
	r.cmd = cmdtest.Command(ctx, t, 0, dir, args...)
	r.token = fmt.Sprintf("OVERLINK_TEST_TOKEN=%d-%d", os.Getpid(), time.Now().UnixNano())
	r.cmd.Env = append(r.cmd.Env, r.token)
	pipe, err := r.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	r.stderr = bufio.NewReader(pipe)
	if err := r.cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		r.killLeftovers(t)
	})
	return r
}

// waitFor polls, within bound, until ok says yes.
func (r *overlinkRun) waitFor(t *testing.T, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(bound); !ok(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: not within %v", what, bound)
		}
	}
}

// readStderrUntil reads overlink's stderr until a line holding s.
func (r *overlinkRun) readStderrUntil(t *testing.T, s string) {
	t.Helper()
	for {
		line, err := r.stderr.ReadString('\n')
		if strings.Contains(line, s) {
			return
		}
		if err != nil {
			t.Fatalf("overlink's stderr ended (%v) before a line with %q", err, s)
		}
	}
}

// finish waits for overlink and returns its exit status, failing the test
// if it ran into bound, and checks that nothing of the run is left.
func (r *overlinkRun) finish(t *testing.T, started time.Time) int {
	t.Helper()
	go io.Copy(io.Discard, r.stderr)
	err := r.cmd.Wait()
	if took := time.Since(started); took >= bound {
		t.Fatalf("overlink ran into the test's bound of %v (%v): it did not end on its own", bound, err)
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	// The kernel kills a PID namespace's processes as its init dies,
	// which is before overlink's Wait for that init returns.
	if left := processesWith(r.token); len(left) > 0 {
		t.Errorf("processes %v of the run are still running after overlink exited", left)
	}
	return r.cmd.ProcessState.ExitCode()
}

func (r *overlinkRun) killLeftovers(t *testing.T) {
	for _, p := range processesWith(r.token) {
		syscall.Kill(p, syscall.SIGKILL)
	}
}

// sleepsOf are the run's processes named sleep.
func (r *overlinkRun) sleepsOf() []int {
	var out []int
	for _, p := range processesWith(r.token) {
		if countComm([]int{p}, "sleep") == 1 {
			out = append(out, p)
		}
	}
	return out
}

// TestServerStopIsBounded: a server command whose shell ignores SIGTERM
// and whose child holds its output is killed after -grace, with that
// child, and overlink exits with the client's status (it used to wait
// for the child, 300 s here).
func TestServerStopIsBounded(t *testing.T) {
	shapedlinktest.Need(t)
	started := time.Now()
	r := startOverlink(t, "-profile", "20:10", "-grace", "1s", "-server-port", "none", "-server-wait", "500ms",
		"-server", `sh -c 'trap "" TERM; sleep 300 & wait'`, "--", "sh", "-c", "exit 3")
	if code := r.finish(t, started); code != 3 {
		t.Errorf("exit status %d, want the client's 3", code)
	}
}

// TestSignalWhileServerStarts: SIGTERM while overlink waits for the server
// command to listen ends the run at once with 128+15, the
// client never started (it used to wait the whole -server-wait, then pass
// the signal on to the client).
func TestSignalWhileServerStarts(t *testing.T) {
	shapedlinktest.Need(t)
	dir := t.TempDir()
	marker := filepath.Join(dir, "client-ran")
	started := time.Now()
	r := startOverlink(t, "-profile", "20:10", "-server-wait", "100s", "-server", "sleep 300", "--", "touch", marker)
	r.waitFor(t, "the server's sleep", func() bool { return len(r.sleepsOf()) == 1 })
	r.cmd.Process.Signal(syscall.SIGTERM)
	if code := r.finish(t, started); code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit status %d, want %d", code, 128+int(syscall.SIGTERM))
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the client command ran after overlink was told to stop")
	}
}

// TestSignalWhileLinkIsBuilt: SIGTERM as soon as overlink holds a network
// namespace (while it builds the link, or at the latest while the server
// starts) ends the run at once with 128+15, the client never started.
func TestSignalWhileLinkIsBuilt(t *testing.T) {
	shapedlinktest.Need(t)
	dir := t.TempDir()
	marker := filepath.Join(dir, "client-ran")
	started := time.Now()
	r := startOverlink(t, "-profile", "20:10", "-server-wait", "100s", "-server", "sleep 300", "--", "touch", marker)
	self, _ := os.Readlink("/proc/self/ns/net")
	r.waitFor(t, "a namespace of overlink's", func() bool {
		fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", r.cmd.Process.Pid))
		for _, fd := range fds {
			if l, err := os.Readlink(fd); err == nil && strings.HasPrefix(l, "net:[") && l != self {
				return true
			}
		}
		return false
	})
	r.cmd.Process.Signal(syscall.SIGTERM)
	if code := r.finish(t, started); code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit status %d, want %d", code, 128+int(syscall.SIGTERM))
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the client command ran after overlink was told to stop")
	}
}

// TestSignalCutsServerGrace: a signal while the server command has its
// -grace to stop kills it at once; overlink keeps the client's status (it
// used to wait out the grace, 100 s here).
func TestSignalCutsServerGrace(t *testing.T) {
	shapedlinktest.Need(t)
	started := time.Now()
	r := startOverlink(t, "-profile", "20:10", "-grace", "100s", "-server-port", "none", "-server-wait", "500ms",
		"-server", `sh -c 'trap "echo got-term" TERM; while :; do sleep 0.1; done'`, "--", "true")
	r.readStderrUntil(t, "server: got-term")
	r.cmd.Process.Signal(syscall.SIGINT)
	if code := r.finish(t, started); code != 0 {
		t.Errorf("exit status %d, want the client's 0", code)
	}
}
