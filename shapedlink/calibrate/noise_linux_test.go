package calibrate

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// alive reports whether pid is a process that has not been reaped and
// is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	return len(f) > 0 && f[0] != "Z"
}

// TestNoiseStartsAndStops: the load is one process at nice 19 per
// online CPU and one more, all running until stop, none after it.
func TestNoiseStartsAndStops(t *testing.T) {
	nz, err := startNoise()
	if err != nil {
		t.Fatal(err)
	}
	pids := nz.pids()
	var cpus unix.CPUSet
	if err := unix.SchedGetaffinity(0, &cpus); err != nil {
		t.Fatal(err)
	}
	if len(pids) != cpus.Count()+1 {
		t.Errorf("%d load processes on %d CPUs; want one a CPU and one allocating", len(pids), cpus.Count())
	}
	for i, pid := range pids {
		if !alive(pid) {
			t.Errorf("load process %d is not running", pid)
		}
		prio, err := unix.Getpriority(unix.PRIO_PROCESS, pid)
		if err != nil {
			t.Fatal(err)
		}
		// The system call returns 20 - nice.
		if want := 1; i < len(pids)-1 && prio != want {
			t.Errorf("cpu load process %d has nice %d; want 19", pid, 20-prio)
		}
	}
	nz.stop()
	for _, pid := range pids {
		if alive(pid) {
			t.Errorf("load process %d outlived stop", pid)
		}
	}
}

// TestNoiseDiesWithParent: a process that starts the load and is then
// killed (no stop, no clean-up) leaves no load process behind.
func TestNoiseDiesWithParent(t *testing.T) {
	if os.Getenv("QUICBENCH_TEST_NOISE_PARENT") == "1" {
		return // the helper role runs in TestNoiseParentHelper
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestNoiseParentHelper$")
	cmd.Env = append(os.Environ(), "QUICBENCH_TEST_NOISE_PARENT=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the helper wrote no pids: %v", err)
	}
	var pids []int
	for _, f := range strings.Fields(strings.TrimPrefix(line, "pids")) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("the helper wrote %q", line)
		}
		pids = append(pids, pid)
	}
	if len(pids) < 2 {
		t.Fatalf("the helper started %d load processes: %q", len(pids), line)
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	// The load processes are the helper's children, re-parented to init
	// or a subreaper when it dies; they must exit on their own.
	deadline := time.Now().Add(5 * time.Second)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if alive(pid) {
			t.Errorf("load process %d outlived its killed parent by 5 s", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestNoiseParentHelper is TestNoiseDiesWithParent's parent: it starts
// the load, writes its pids and waits to be killed.
func TestNoiseParentHelper(t *testing.T) {
	if os.Getenv("QUICBENCH_TEST_NOISE_PARENT") != "1" {
		t.Skip("a helper for TestNoiseDiesWithParent")
	}
	nz, err := startNoise()
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, pid := range nz.pids() {
		s = append(s, strconv.Itoa(pid))
	}
	fmt.Println("pids " + strings.Join(s, " "))
	time.Sleep(time.Minute)
	t.Fatal("not killed within a minute")
}
