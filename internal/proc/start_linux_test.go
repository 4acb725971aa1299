package proc

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// envChild makes the test binary a child that waits for end of file on its
// standard input and exits with status 0.
const envChild = "QUICBENCH_PROC_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(envChild) != "" {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// child prepares a child that the kernel kills with SIGKILL when the thread
// that started it exits, and that otherwise exits with status 0 once its
// standard input is closed.
func child(t *testing.T) (*exec.Cmd, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command("/proc/self/exe")
	cmd.Env = append(os.Environ(), envChild+"=1")
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	return cmd, stdin
}

// startFromDyingThread calls start(cmd) from a goroutine locked to its
// thread that then ends without unlocking it, so the Go runtime ends the
// thread, and waits until the thread is gone. By then the kernel has sent
// the parent-death signal of every child forked from that thread: it does
// so while the thread exits, before the thread disappears from
// /proc/self/task.
func startFromDyingThread(t *testing.T, cmd *exec.Cmd, start func(*exec.Cmd) error) {
	t.Helper()
	type result struct {
		tid int
		err error
	}
	var r result
	for r.tid == 0 {
		ch := make(chan result, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with this goroutine
			if unix.Gettid() == os.Getpid() {
				// The main thread is never ended, only parked for good
				// (and then no longer runs other goroutines): try again
				// on another thread.
				ch <- result{}
				return
			}
			err := start(cmd)
			ch <- result{unix.Gettid(), err}
		}()
		r = <-ch
	}
	if r.err != nil {
		t.Fatalf("starting the child: %v", r.err)
	}
	task := fmt.Sprintf("/proc/self/task/%d", r.tid)
	// Not a timing assertion: the thread's exit is certain, this only
	// bounds how long to wait for it if the runtime stops ending threads.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		if _, err := os.Stat(task); errors.Is(err, fs.ErrNotExist) {
			return
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("thread %d, locked by a goroutine that ended, still exists after a minute: the runtime no longer ends such threads, so this test proves nothing", r.tid)
		}
	}
}

// outcome closes the child's standard input, waits for it and says whether
// it was killed by SIGKILL (true) or exited with status 0 (false).
func outcome(t *testing.T, cmd *exec.Cmd, stdin io.Closer) bool {
	t.Helper()
	stdin.Close()
	err := cmd.Wait()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	switch {
	case ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL:
		return true
	case err == nil:
		return false
	}
	t.Fatalf("the child ended neither cleanly nor by SIGKILL: %v", err)
	return false
}

// TestChildOfDyingThreadSurvives starts a child with a parent-death signal
// through Start from a goroutine that locks its thread and ends without
// unlocking it. The child must outlive that thread.
func TestChildOfDyingThreadSurvives(t *testing.T) {
	cmd, stdin := child(t)
	startFromDyingThread(t, cmd, Start)
	if outcome(t, cmd, stdin) {
		t.Fatal("a child started by Start was killed when the thread that called Start exited")
	}
}

// TestDirectStartFromDyingThreadIsKilled is the control for the test above:
// the same child started with cmd.Start itself, on the dying thread, is
// killed when the thread goes. If it were not, the test above could not
// fail either.
func TestDirectStartFromDyingThreadIsKilled(t *testing.T) {
	cmd, stdin := child(t)
	startFromDyingThread(t, cmd, (*exec.Cmd).Start)
	if !outcome(t, cmd, stdin) {
		t.Fatal("a child started directly from a thread that then exited survived: the kernel did not send its parent-death signal, so TestChildOfDyingThreadSurvives proves nothing")
	}
}

// TestStartInNetns starts a child inside a new network namespace from a
// dying thread, and checks that the child is there, survives the thread,
// and that the starter thread went back to its own namespace.
func TestStartInNetns(t *testing.T) {
	home := threadNetns(t, threadID())
	nsFD, ino := newNetns(t)
	defer unix.Close(nsFD)
	cmd, stdin := child(t)
	startFromDyingThread(t, cmd, func(c *exec.Cmd) error { return StartInNetns(c, nsFD) })
	var st unix.Stat_t
	if err := unix.Stat(fmt.Sprintf("/proc/%d/ns/net", cmd.Process.Pid), &st); err != nil {
		t.Fatal(err)
	}
	if st.Ino != ino {
		t.Errorf("the child is in network namespace %d, want %d", st.Ino, ino)
	}
	if after := threadNetns(t, threadID()); after != home {
		t.Errorf("the starter thread is in network namespace %d after the start; it was in %d before", after, home)
	}
	if outcome(t, cmd, stdin) {
		t.Fatal("a child started by StartInNetns was killed when the thread that called it exited")
	}
}

// threadNetns returns the inode of thread tid's network namespace.
func threadNetns(t *testing.T, tid int) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(fmt.Sprintf("/proc/self/task/%d/ns/net", tid), &st); err != nil {
		t.Fatal(err)
	}
	return st.Ino
}

// newNetns creates a network namespace on a throwaway thread (never the
// main thread, which the runtime would keep, parked, in that namespace)
// and returns a descriptor for it and its inode.
func newNetns(t *testing.T) (int, uint64) {
	t.Helper()
	type result struct {
		fd  int
		ino uint64
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends in the new namespace
		if unix.Gettid() == os.Getpid() {
			ch <- result{fd: -1} // the main thread: parked as it is; try again
			return
		}
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			ch <- result{err: err}
			return
		}
		fd, err := unix.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()), unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			ch <- result{err: err}
			return
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			ch <- result{err: err}
			return
		}
		ch <- result{fd: fd, ino: st.Ino}
	}()
	r := <-ch
	if r.fd == -1 && r.err == nil {
		return newNetns(t)
	}
	if errors.Is(r.err, unix.EPERM) {
		t.Skipf("cannot create a network namespace (need root or CAP_SYS_ADMIN): %v", r.err)
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.fd, r.ino
}

// TestStartInNetnsBadDescriptor leaves the starter usable after a failed
// setns.
func TestStartInNetnsBadDescriptor(t *testing.T) {
	f, err := os.Open("/proc/self/exe") // a descriptor, but not a namespace
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command("/proc/self/exe")
	if err := StartInNetns(cmd, int(f.Fd())); err == nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatal("StartInNetns with a descriptor that is not a namespace succeeded")
	}
	if cmd.Process != nil {
		t.Fatal("StartInNetns started the command although setns failed")
	}
	c, stdin := child(t)
	if err := Start(c); err != nil {
		t.Fatal(err)
	}
	if outcome(t, c, stdin) {
		t.Fatal("child killed")
	}
}
