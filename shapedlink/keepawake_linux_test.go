package shapedlink

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// awakeChildren lists this process's children that are keep-awake
// processes (argument 0 "quicbench-awake").
func awakeChildren(t *testing.T) []int {
	t.Helper()
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	var pids []int
	for _, d := range dirs {
		cmdline, err := os.ReadFile(d + "/cmdline")
		if err != nil || !strings.HasPrefix(string(cmdline), "quicbench-awake\x00") {
			continue
		}
		status, err := os.ReadFile(d + "/status")
		if err != nil {
			continue
		}
		for line := range strings.Lines(string(status)) {
			if v, ok := strings.CutPrefix(line, "PPid:"); ok && strings.TrimSpace(v) == strconv.Itoa(os.Getpid()) {
				pid, _ := strconv.Atoi(filepath.Base(d))
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// spinningCPUs returns, for process pid, the CPU each of its threads at
// SCHED_IDLE is allowed on, for those that are running or runnable
// (state R) and allowed on exactly one CPU, and their thread ids; other
// describes any other SCHED_IDLE thread.
func spinningCPUs(t *testing.T, pid int) (cpus, tids []int, other []string) {
	t.Helper()
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	if err != nil || len(tasks) == 0 {
		t.Fatalf("no threads of process %d: %v", pid, err)
	}
	for _, task := range tasks {
		stat, err := os.ReadFile(task + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		// After the command: the state is f[0], the policy (field 41)
		// f[38].
		if len(f) < 39 || f[38] != strconv.Itoa(unix.SCHED_IDLE) {
			continue
		}
		tid, _ := strconv.Atoi(filepath.Base(task))
		var set unix.CPUSet
		if err := unix.SchedGetaffinity(tid, &set); err != nil {
			other = append(other, fmt.Sprintf("thread %d: sched_getaffinity: %v", tid, err))
			continue
		}
		cpu := -1
		for c := range 1024 {
			if set.IsSet(c) {
				cpu = c
				break
			}
		}
		if f[0] != "R" || set.Count() != 1 {
			other = append(other, fmt.Sprintf("thread %d: state %s, on %d CPUs", tid, f[0], set.Count()))
			continue
		}
		cpus = append(cpus, cpu)
		tids = append(tids, tid)
	}
	slices.Sort(cpus)
	return cpus, tids, other
}

// voluntarySwitches is how many times thread tid of process pid has
// given up its CPU (blocked or slept).
func voluntarySwitches(t *testing.T, pid, tid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/status", pid, tid))
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "voluntary_ctxt_switches:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				t.Fatalf("thread %d: %q", tid, line)
			}
			return n
		}
	}
	t.Fatalf("thread %d: no voluntary_ctxt_switches in its status", tid)
	return 0
}

// allowedCPUs are the CPUs this process may run on.
func allowedCPUs(t *testing.T) []int {
	t.Helper()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	var cpus []int
	for c := range 1024 {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// TestEmulatorKeepAwake builds an emulated link with EmulatorKeepAwake:
// while it is up, one thread per allowed CPU spins at SCHED_IDLE pinned
// to that CPU in a process of its own, the record says which CPUs, and
// after Close no such process is left; nor after a New that fails once
// the process runs.
func TestEmulatorKeepAwake(t *testing.T) {
	needNamespaces(t)
	if pids := awakeChildren(t); len(pids) > 0 {
		t.Fatalf("keep-awake processes %v before the test", pids)
	}
	want := allowedCPUs(t)
	p, _ := ParseProfile("20:10")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var logs lockedBuffer
	l, err := New(ctx, p, Options{Backend: BackendEmulator, EmulatorKeepAwake: true, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	pids := awakeChildren(t)
	if len(pids) != 1 {
		t.Fatalf("keep-awake processes %v with the link up, want one", pids)
	}
	if pids[0] == l.Instruments().EmulatorPID() {
		t.Fatal("the keep-awake process is the emulator's")
	}
	cpus, tids, other := spinningCPUs(t, pids[0])
	if !slices.Equal(cpus, want) || len(other) > 0 {
		t.Errorf("SCHED_IDLE threads spinning on CPUs %v (others: %v); want one on each of %v", cpus, other, want)
	}
	// A spinning thread never gives up its CPU of its own accord (the Go
	// runtime's preemption would make it, tens of times a second). Only
	// the time it ran counts, so a loaded machine weakens this check but
	// does not fail it.
	var before []int
	for _, tid := range tids {
		before = append(before, voluntarySwitches(t, pids[0], tid))
	}
	time.Sleep(time.Second)
	for i, tid := range tids {
		if n := voluntarySwitches(t, pids[0], tid) - before[i]; n > 0 {
			t.Errorf("spinning thread %d gave up its CPU %d times in a second", tid, n)
		}
	}
	hs, err := l.Instruments().HostState()
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := l.Instruments().ShaperStats()
	if !slices.Equal(hs.EmulatorKeepAwakeCPUs, want) || !slices.Equal(rep.KeepAwakeCPUs, want) {
		t.Errorf("recorded CPUs kept awake: host state %v, shaper stats %v; want %v", hs.EmulatorKeepAwakeCPUs, rep.KeepAwakeCPUs, want)
	}
	if !strings.Contains(logs.String(), "CPUs kept awake") {
		t.Errorf("New did not log the CPUs kept awake:\n%s", logs.String())
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if pids := awakeChildren(t); len(pids) > 0 {
		t.Errorf("keep-awake processes %v left after Close", pids)
	}

	// A New that fails after the keep-awake process is up.
	var during []int
	keepAwakeStarted = func() error {
		during = awakeChildren(t)
		return errors.New("injected failure")
	}
	defer func() { keepAwakeStarted = nil }()
	if _, err := New(ctx, p, Options{Backend: BackendEmulator, EmulatorKeepAwake: true}); err == nil || !strings.Contains(err.Error(), "injected failure") {
		t.Fatalf("New with an injected failure: %v", err)
	}
	if len(during) != 1 {
		t.Fatalf("keep-awake processes %v while the failing New ran, want one; the check below would prove nothing", during)
	}
	if pids := awakeChildren(t); len(pids) > 0 {
		t.Errorf("keep-awake processes %v left after a failed New", pids)
	}
}

// TestEmulatorKeepAwakeAuto: with BackendAuto the option holds where the
// emulator is chosen and is refused, naming the choice, where netem is.
func TestEmulatorKeepAwakeAuto(t *testing.T) {
	needNamespaces(t)
	p, _ := ParseProfile("20:10")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := New(ctx, p, Options{EmulatorKeepAwake: true})
	if err == nil {
		defer l.Close()
		t.Logf("auto chose %q", l.Backend())
		if l.Backend() != BackendEmulator {
			t.Fatalf("auto chose %q with EmulatorKeepAwake and New accepted it", l.Backend())
		}
		return
	}
	if !strings.Contains(err.Error(), "EmulatorKeepAwake") || !strings.Contains(err.Error(), `choice was "netem"`) {
		t.Fatalf("auto with EmulatorKeepAwake: %v; want it refused only when netem is chosen, saying so", err)
	}
	if pids := awakeChildren(t); len(pids) > 0 {
		t.Errorf("keep-awake processes %v left after the refusal", pids)
	}
}

const envKeepAwakeKillChild = "QUICBENCH_TEST_KEEP_AWAKE_KILL_CHILD"

// TestKeepAwakeDiesWithParent kills outright (SIGKILL) a process holding
// a link with EmulatorKeepAwake: its keep-awake process must go too.
func TestKeepAwakeDiesWithParent(t *testing.T) {
	needNamespaces(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	token := fmt.Sprintf("%s=%d-%d", envKeepAwakeKillChild, os.Getpid(), time.Now().UnixNano())
	cmd := exec.CommandContext(ctx, "/proc/self/exe", "-test.run=^TestKeepAwakeKillChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), token)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	pid := 0
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "KEEP-AWAKE-READY pid=%d", &pid); err == nil {
			break
		}
	}
	if pid == 0 {
		t.Fatalf("the helper never reported its keep-awake process (scan error %v)", sc.Err())
	}
	go io.Copy(io.Discard, stdout)
	if !slices.Contains(procsWith(token), pid) {
		t.Fatalf("the keep-awake process %d is not running before the kill; the check below would prove nothing", pid)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	// The minute only bounds the wait.
	for deadline := time.Now().Add(time.Minute); slices.Contains(procsWith(token), pid); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL) // leave nothing to the next test
			t.Fatalf("a minute after its parent was killed, the keep-awake process %d still runs", pid)
		}
	}
}

// TestKeepAwakeKillChild is the helper of TestKeepAwakeDiesWithParent.
func TestKeepAwakeKillChild(t *testing.T) {
	if os.Getenv(envKeepAwakeKillChild) == "" {
		t.Skip("helper for TestKeepAwakeDiesWithParent")
	}
	p, _ := ParseProfile("20:10")
	l, err := New(context.Background(), p, Options{Backend: BackendEmulator, EmulatorKeepAwake: true})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("KEEP-AWAKE-READY pid=%d\n", l.shaper.(*emuShaper).awake.PID())
	time.Sleep(time.Minute) // killed long before this
}
