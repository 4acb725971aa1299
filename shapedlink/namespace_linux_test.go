package shapedlink

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// envStdinChild makes the test binary (run as TestStdinChild) a child that
// exits with status 0 at end of file on its standard input.
const envStdinChild = "QUICBENCH_TEST_STDIN_CHILD"

// TestStdinChild is the child of TestStartSurvivesThreadExits; it does
// nothing unless that test started it.
func TestStdinChild(t *testing.T) {
	if os.Getenv(envStdinChild) == "" {
		t.Skip("helper for TestStartSurvivesThreadExits")
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0)
}

// endThreads makes the Go runtime end, as far as a test can, every OS
// thread it might hand a goroutine: it locks more goroutines than the
// process has threads, each to a thread of its own (a goroutine blocked
// while locked keeps its thread to itself, so the runtime must use every
// idle thread, then make new ones), and ends them all without unlocking,
// which ends their threads. It returns once those threads are gone, by
// which time the kernel has sent the parent-death signal of every child
// forked from one of them. Threads that stay busy throughout (running a
// goroutine, in a system call, or locked for good) are not reached.
func endThreads(t *testing.T) {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	k := 2*len(tasks) + 8
	tids := make(chan int, k)
	release := make(chan struct{})
	var locked sync.WaitGroup
	locked.Add(k)
	for range k {
		go func() {
			runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
			tids <- unix.Gettid()
			locked.Done()
			<-release
		}()
	}
	locked.Wait()
	close(release)
	deadline := time.Now().Add(time.Minute) // bounds a wait, asserts no timing
	for range k {
		tid := <-tids
		if tid == os.Getpid() {
			continue // the main thread is parked for good, never ended
		}
		task := "/proc/self/task/" + strconv.Itoa(tid)
		for {
			if _, err := os.Stat(task); errors.Is(err, fs.ErrNotExist) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("thread %d, locked by a goroutine that ended, still exists after a minute", tid)
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// TestStartSurvivesThreadExits starts a child that asks for SIGKILL when
// its parent dies (as the shaper and the examples' roles do) with
// Namespace.Start, called from a goroutine that then ends while locked to
// its thread, and then ends every other thread it can. The child must
// outlive all of them: the kernel sends the parent-death signal when the
// thread that forked the child exits, whatever thread that was.
func TestStartSurvivesThreadExits(t *testing.T) {
	needNamespaces(t)
	ns, err := newNamespace("client")
	if err != nil {
		t.Fatal(err)
	}
	defer ns.close()
	cmd := exec.Command("/proc/self/exe", "-test.run=^TestStdinChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), envStdinChild+"=1")
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		errc <- ns.Start(cmd)
	}()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	endThreads(t)
	stdin.Close()
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("the child was killed (signal %d, %v) when threads of this process exited", int(ws.Signal()), ws.Signal())
	}
	if err != nil {
		t.Fatalf("the child failed: %v", err)
	}
}

// TestShaperSurvivesThreadExits ends every thread it can while an emulated
// link is up: the shaper must still be running and forwarding.
func TestShaperSurvivesThreadExits(t *testing.T) {
	l := newTestLink(t, "20:10", BackendEmulator)
	srv, cli := udpPair(t, l)
	endThreads(t)
	if err := l.Err(); err != nil {
		t.Fatalf("after threads of this process exited: %v", err)
	}
	var err error
	for range 3 { // lossless, but allow for a very slow machine
		if _, err = echoRoundTrip(t, srv, cli, 5*time.Second); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatalf("no echo through the link after threads of this process exited: %v", err)
	}
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
}
