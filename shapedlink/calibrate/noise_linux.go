package calibrate

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// envNoise marks a process as one of the background load's: its value is
// "cpu" or "alloc", then ":" and the parent's process id.
const envNoise = "QUICBENCH_CALIBRATE_NOISE"

// A re-executed binary becomes a load process here, before main.
func init() {
	v, ok := os.LookupEnv(envNoise)
	if !ok {
		return
	}
	os.Exit(noiseServe(v))
}

// noiseServe runs the load role v and returns its exit status. It ends
// when its standard input (a pipe from the parent) reaches end of file,
// or its parent is gone.
func noiseServe(v string) int {
	role, p, _ := strings.Cut(v, ":")
	ppid, err := strconv.Atoi(p)
	if err != nil || role != "cpu" && role != "alloc" {
		fmt.Fprintf(os.Stderr, "calibrate: %s=%q is not a load role (cpu or alloc, a colon, the parent's process id)\n", envNoise, v)
		return 2
	}
	os.Unsetenv(envNoise)
	if os.Getppid() != ppid {
		return 1 // the parent died before the death signal was armed
	}
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(0)
	}()
	go func() {
		for range time.Tick(100 * time.Millisecond) {
			if os.Getppid() != ppid {
				os.Exit(1)
			}
		}
	}()
	// Tell the parent the load runs.
	if _, err := os.Stdout.Write([]byte("ok\n")); err != nil {
		return 1
	}
	if role == "cpu" {
		runtime.GOMAXPROCS(1)
		spin()
	}
	churn()
	return 0
}

// spin never returns: a loop with no system call.
func spin() {
	x := uint64(1)
	for {
		for range 1 << 20 {
			x = x*6364136223846793005 + 1442695040888963407
		}
		if x == 0 { // never: keeps the loop's work live
			os.Exit(3)
		}
	}
}

// churn never returns: 64 live blocks of 1 MiB, one replaced at a time,
// every page of the new one written; freed memory goes back to the
// kernel every 100 ms.
func churn() {
	const block, live = 1 << 20, 64
	blocks := make([][]byte, live)
	last := time.Now()
	for i := 0; ; i++ {
		b := make([]byte, block)
		for j := 0; j < block; j += 4096 {
			b[j] = byte(i)
		}
		blocks[i%live] = b
		if time.Since(last) >= 100*time.Millisecond {
			debug.FreeOSMemory()
			last = time.Now()
		}
	}
}

// noise is a running background load.
type noise struct {
	cmds  []*exec.Cmd
	pipes []*os.File
}

// startNoise starts NoiseLoad: one "cpu" process at nice 19 per online
// CPU and one "alloc" process. Each dies with this process (a death
// signal, end of file on its standard input, and a watch on its parent),
// and stop kills them.
func startNoise() (*noise, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("noise: finding this program to re-execute: %w", err)
	}
	var cpus unix.CPUSet
	n := runtime.NumCPU()
	if unix.SchedGetaffinity(0, &cpus) == nil {
		n = cpus.Count()
	}
	nz := &noise{}
	// The death signal is sent when the thread that forked exits: fork
	// from a thread that stays.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for i := 0; i <= n; i++ {
		role := "cpu"
		if i == n {
			role = "alloc"
		}
		r, w, err := os.Pipe()
		if err != nil {
			nz.stop()
			return nil, fmt.Errorf("noise: %w", err)
		}
		cmd := exec.Command(self)
		cmd.Args = []string{"calibrate-noise-" + role}
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s:%d", envNoise, role, os.Getpid()))
		cmd.Stdin, cmd.Stderr = r, os.Stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			r.Close()
			w.Close()
			nz.stop()
			return nil, fmt.Errorf("noise: %w", err)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		err = cmd.Start()
		r.Close()
		if err != nil {
			w.Close()
			nz.stop()
			return nil, fmt.Errorf("noise: starting a %s load process: %w", role, err)
		}
		nz.cmds, nz.pipes = append(nz.cmds, cmd), append(nz.pipes, w)
		if err := readyWithin(out, 5*time.Second); err != nil {
			nz.stop()
			return nil, fmt.Errorf("noise: the %s load process did not start: %w", role, err)
		}
		if role == "cpu" {
			if err := unix.Setpriority(unix.PRIO_PROCESS, cmd.Process.Pid, 19); err != nil {
				nz.stop()
				return nil, fmt.Errorf("noise: nice 19 for a cpu load process: %w", err)
			}
		}
	}
	return nz, nil
}

// readyWithin waits for a load process's "ok" line on out.
func readyWithin(out io.ReadCloser, d time.Duration) error {
	got := make(chan error, 1)
	go func() {
		var b [3]byte
		_, err := io.ReadFull(out, b[:])
		if err == nil && string(b[:]) != "ok\n" {
			err = fmt.Errorf("it wrote %q", b[:])
		}
		got <- err
	}()
	select {
	case err := <-got:
		return err
	case <-time.After(d):
		return fmt.Errorf("no word from it in %v", d)
	}
}

// stop kills the load processes and waits for them.
func (nz *noise) stop() {
	if nz == nil {
		return
	}
	for i, cmd := range nz.cmds {
		nz.pipes[i].Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	nz.cmds, nz.pipes = nil, nil
}

// pids returns the load processes' ids (for tests).
func (nz *noise) pids() []int {
	var ps []int
	for _, c := range nz.cmds {
		ps = append(ps, c.Process.Pid)
	}
	return ps
}
