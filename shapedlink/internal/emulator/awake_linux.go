package emulator

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// This file is the keep-awake process: one busy loop per CPU at the idle
// scheduling class, in a process of its own, so that no CPU the shaper
// may run on ever halts.

// envAwake is the environment variable that marks a process as the
// keep-awake process; its value is the parent's process id.
const envAwake = "QUICBENCH_EMULATOR_AWAKE"

// Awake is one keep-awake process prepared by AwakeCommand.
type Awake struct {
	cmd    *exec.Cmd
	stdinW *os.File
	stdinR *os.File
	out    *os.File // the read end of its standard output
	outW   *os.File
	stderr tailBuffer
	cpus   []int

	waitOnce sync.Once
	done     chan struct{}
	waitErr  error
	stopOnce sync.Once
}

// AwakeCommand prepares the keep-awake process: /proc/self/exe
// re-executed with envAwake set, a pipe on standard input (end of file
// stops it) and one on standard output (where it says it is ready). It
// runs one thread per CPU in its affinity mask (inherited from the
// thread that starts it), each pinned to its CPU at SCHED_IDLE and
// spinning. The caller starts the command and then uses Ready and Stop.
func AwakeCommand() (*exec.Cmd, *Awake, error) {
	stdinR, stdinW, err := os.Pipe()
	if err != nil {
		return nil, nil, fmt.Errorf("emulator: pipe for the keep-awake process's standard input: %w", err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		stdinR.Close()
		stdinW.Close()
		return nil, nil, fmt.Errorf("emulator: pipe for the keep-awake process's standard output: %w", err)
	}
	a := &Awake{stdinR: stdinR, stdinW: stdinW, out: outR, outW: outW, done: make(chan struct{})}
	cmd := exec.Command("/proc/self/exe")
	cmd.Args = []string{"quicbench-awake"}
	cmd.Env = append(os.Environ(), envAwake+"="+strconv.Itoa(os.Getpid()), awakeGODEBUG())
	cmd.Stdin = stdinR
	cmd.Stdout = outW
	cmd.Stderr = &a.stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	a.cmd = cmd
	return cmd, a, nil
}

// awakeGODEBUG is the keep-awake process's GODEBUG: this one's, with
// asynchronous preemption off, so that the runtime never stops a
// spinning thread (which would leave its CPU idle until the thread is
// handed back its P).
func awakeGODEBUG() string {
	v := os.Getenv("GODEBUG")
	if v != "" {
		v += ","
	}
	return "GODEBUG=" + v + "asyncpreemptoff=1"
}

// PID returns the keep-awake process's id, or 0 if it has not been
// started.
func (a *Awake) PID() int {
	if a.cmd.Process == nil {
		return 0
	}
	return a.cmd.Process.Pid
}

// CPUs returns the CPUs kept awake, one spinning thread each, once Ready
// has returned nil.
func (a *Awake) CPUs() []int { return append([]int(nil), a.cpus...) }

// startWaiter closes the parent's copies of the child's pipe ends and
// starts waiting for it, once.
func (a *Awake) startWaiter() {
	a.waitOnce.Do(func() {
		a.stdinR.Close()
		a.outW.Close()
		go func() {
			a.waitErr = a.cmd.Wait()
			close(a.done)
		}()
	})
}

// Ready waits until every spinning thread is pinned and at SCHED_IDLE, or
// reports why not.
func (a *Awake) Ready(ctx context.Context) error {
	if a.cmd.Process == nil {
		return errors.New("emulator: the keep-awake command has not been started")
	}
	a.startWaiter()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(a.out).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	var got string
	select {
	case got = <-line:
	case <-ctx.Done():
		return fmt.Errorf("emulator: waiting for the keep-awake process: %w", ctx.Err())
	}
	if rest, ok := strings.CutPrefix(got, "ready "); ok {
		cpus, err := parseCPUs(rest)
		if err != nil {
			return fmt.Errorf("emulator: the keep-awake process said %q: %w", got, err)
		}
		a.cpus = cpus
		return nil
	}
	<-a.done
	return fmt.Errorf("emulator: the keep-awake process did not start (%v): %s", a.waitErr, strings.TrimSpace(a.stderr.String()))
}

// Stop kills the keep-awake process, if it was started, waits for it and
// releases the pipes. It is idempotent.
func (a *Awake) Stop() {
	a.stopOnce.Do(func() {
		a.stdinW.Close()
		if a.cmd.Process != nil {
			_ = a.cmd.Process.Kill()
			a.startWaiter()
			<-a.done
		}
		a.stdinR.Close()
		a.outW.Close()
		a.out.Close()
	})
}

// parseCPUs reads "0,1,3".
func parseCPUs(s string) ([]int, error) {
	var cpus []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a CPU number", f)
		}
		cpus = append(cpus, n)
	}
	return cpus, nil
}

// serveAwake runs the keep-awake process for the parent v (envAwake's
// value) and returns its exit status: it spins until a signal or end of
// file on standard input, then returns 0; 1 if it could not start.
func serveAwake(v string) int {
	os.Unsetenv(envAwake)
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "quicbench-awake:", err)
		return 1
	}
	// The parent-death signal was set at fork; a parent that died before
	// it took effect has left this process re-parented.
	if ppid, err := strconv.Atoi(v); err != nil || ppid != os.Getppid() {
		return fail(fmt.Errorf("the parent process %s is gone", v))
	}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return fail(fmt.Errorf("sched_getaffinity: %w", err))
	}
	var cpus []int
	for c := 0; c < len(set)*64 && len(cpus) < set.Count(); c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	// A P for every spinning thread and room for the rest; nothing here
	// needs the collector.
	runtime.GOMAXPROCS(len(cpus) + 2)
	debug.SetGCPercent(-1)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	errc := make(chan error, len(cpus))
	for _, c := range cpus {
		go spin(c, errc)
	}
	var names []string
	for _, c := range cpus {
		if err := <-errc; err != nil {
			return fail(err)
		}
		names = append(names, strconv.Itoa(c))
	}
	fmt.Printf("ready %s\n", strings.Join(names, ","))
	eof := make(chan struct{})
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		close(eof)
	}()
	select {
	case <-sigs:
	case <-eof:
	}
	return 0
}

// spin pins a thread of its own to cpu at SCHED_IDLE, reports the
// outcome on errc and, if that was nil, spins for good.
func spin(cpu int, errc chan<- error) {
	runtime.LockOSThread() // never unlocked: the thread spins until the process exits
	var one unix.CPUSet
	one.Set(cpu)
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		errc <- fmt.Errorf("pinning a thread to CPU %d: %w", cpu, err)
		return
	}
	if err := unix.SchedSetAttr(0, &unix.SchedAttr{Policy: unix.SCHED_IDLE}, 0); err != nil {
		errc <- fmt.Errorf("SCHED_IDLE for the thread on CPU %d: %w", cpu, err)
		return
	}
	errc <- nil
	for n := uint64(0); ; n++ {
	}
}
