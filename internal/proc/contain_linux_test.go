package proc

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
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

// startContained starts cmd with StartContained in this process's network
// namespace, skipping where PID namespaces cannot be made.
func startContained(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := StartContained(cmd, -1); err != nil {
		if errors.Is(err, syscall.EPERM) {
			t.Skipf("cannot create a PID namespace here (needs root or CAP_SYS_ADMIN): %v", err)
		}
		t.Fatal(err)
	}
}

// TestContainedExitStatus: the caller reads the program's status from the
// init: an exit code as it is, a death by signal S as 128+S.
func TestContainedExitStatus(t *testing.T) {
	for _, c := range []struct {
		script string
		want   int
	}{
		{"exit 0", 0},
		{"exit 7", 7},
		{"kill -TERM $$", 128 + int(syscall.SIGTERM)},
		{"kill -KILL $$", 128 + int(syscall.SIGKILL)},
	} {
		cmd := exec.Command("sh", "-c", c.script)
		startContained(t, cmd)
		_ = cmd.Wait()
		if got := cmd.ProcessState.ExitCode(); got != c.want {
			t.Errorf("sh -c %q: exit status %d, want %d", c.script, got, c.want)
		}
	}
}

// TestContainedStartError: a program that cannot be executed is reported
// by StartContained, as cmd.Start reports it, and not as a later exit.
func TestContainedStartError(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "not-executable")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		want error
	}{
		{filepath.Join(dir, "missing"), fs.ErrNotExist},
		{notExec, fs.ErrPermission},
	} {
		cmd := &exec.Cmd{Path: c.path, Args: []string{"x"}}
		err := StartContained(cmd, -1)
		if errors.Is(err, syscall.EPERM) && c.want != fs.ErrPermission {
			t.Skipf("cannot create a PID namespace here: %v", err)
		}
		var pe *fs.PathError
		if !errors.Is(err, c.want) || !errors.As(err, &pe) || pe.Path != c.path {
			t.Errorf("StartContained(%s) = %v, want a *fs.PathError for that path wrapping %v", c.path, err, c.want)
		}
		if cmd.Path != c.path || len(cmd.Args) != 1 || cmd.Env != nil || cmd.SysProcAttr != nil || cmd.ExtraFiles != nil {
			t.Errorf("StartContained left cmd changed: %+v", cmd)
		}
	}
}

// TestContainedProgramSeesItsCommand: the program runs with the caller's
// arguments, environment (without the init's variable), directory and
// extra files, in a PID namespace of its own where it is not PID 1; cmd's
// fields are the caller's again after the start.
func TestContainedProgramSeesItsCommand(t *testing.T) {
	dir := t.TempDir()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	script := `echo "$0 $1 $$ $(pwd) ${QB_TEST_VAR:-unset} ${` + envInit + `:-absent}"; echo extra >&3; readlink /proc/self/ns/pid`
	cmd := exec.Command("sh", "-c", script, "zero", "one")
	cmd.Dir = dir
	cmd.Env = []string{"QB_TEST_VAR=set", "PATH=/usr/bin:/bin"}
	cmd.ExtraFiles = []*os.File{w}
	var out bytes.Buffer
	cmd.Stdout = &out
	startContained(t, cmd)
	w.Close()
	if cmd.Path == "/proc/self/exe" || cmd.Args[0] != "sh" || len(cmd.Env) != 2 || len(cmd.ExtraFiles) != 1 || cmd.SysProcAttr != nil {
		t.Errorf("after the start cmd is not the caller's: path %s args %q env %q extra %d sys %+v", cmd.Path, cmd.Args, cmd.Env, len(cmd.ExtraFiles), cmd.SysProcAttr)
	}
	extra := make([]byte, 16)
	n, _ := r.Read(extra)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v; output %q", err, out.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("output %q: want two lines", out.String())
	}
	f := strings.Fields(lines[0])
	if len(f) != 6 || f[0] != "zero" || f[1] != "one" || f[3] != dir || f[4] != "set" || f[5] != "absent" {
		t.Errorf("the program saw %q, want $0 zero, $1 one, its PID, pwd %s, QB_TEST_VAR set and no %s", lines[0], dir, envInit)
	}
	if len(f) > 2 && f[2] == "1" {
		t.Errorf("the program is PID 1 of its namespace; the init must be")
	}
	if got := string(extra[:n]); got != "extra\n" {
		t.Errorf("descriptor 3 carried %q, want %q", got, "extra\n")
	}
	self, _ := os.Readlink("/proc/self/ns/pid")
	if lines[1] == self || !strings.HasPrefix(lines[1], "pid:[") {
		t.Errorf("the program's PID namespace is %q, this process's %q: want a new one", lines[1], self)
	}
}

// TestContainedForwardsSignals: a signal sent to cmd.Process (the init)
// reaches the program.
func TestContainedForwardsSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2} {
		name := strings.TrimPrefix(unix.SignalName(sig), "SIG")
		cmd := exec.Command("sh", "-c", `trap 'exit 42' `+name+`; echo ready; while :; do sleep 0.05; done`)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		startContained(t, cmd)
		if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "ready\n" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("the program did not start: %q %v", line, err)
		}
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		if got := cmd.ProcessState.ExitCode(); got != 42 {
			t.Errorf("%v sent to the init: exit status %d, want the program's trap's 42", sig, got)
		}
	}
}

// TestContainedLeavesNothing: when the program exits, what it left
// running (a background child holding its output, a detached daemon in a
// session of its own) is gone by the time Wait returns, and Wait returns
// although that child held the program's output pipe.
func TestContainedLeavesNothing(t *testing.T) {
	token := fmt.Sprintf("QB_PROC_TEST_TOKEN=%d-%d", os.Getpid(), time.Now().UnixNano())
	cmd := exec.Command("sh", "-c", `sleep 300 & setsid sh -c 'sleep 301 </dev/null >/dev/null 2>&1 &' ; echo started`)
	cmd.Env = append(os.Environ(), token)
	var out bytes.Buffer
	cmd.Stdout = &out
	// Bounds the wait if the leftovers did hold the pipe: without it the
	// test would hang for 300 s instead of failing.
	cmd.WaitDelay = 20 * time.Second
	startContained(t, cmd)
	err := cmd.Wait()
	left := withToken(token)
	for _, p := range left {
		syscall.Kill(p, syscall.SIGKILL)
	}
	if len(left) > 0 {
		t.Fatalf("processes %v the program started are still running after Wait returned (Wait: %v)", left, err)
	}
	if err != nil || out.String() != "started\n" {
		t.Fatalf("Wait = %v, output %q", err, out.String())
	}
}

// withToken lists the live processes whose environment holds token.
func withToken(token string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ") // empty for a zombie
		if err == nil && slices.ContainsFunc(bytes.Split(env, []byte{0}), func(kv []byte) bool { return string(kv) == token }) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestContainedProcessGroups: by default the program stays in the caller's
// process group (a terminal's keys and job control act on it as on any
// child) and the init leaves it, so that a signal to that group is not
// passed on a second time; with Setpgid the program is in the init's new
// group.
func TestContainedProcessGroups(t *testing.T) {
	for _, setpgid := range []bool{false, true} {
		cmd := exec.Command("sh", "-c", "echo ready; exec sleep 300")
		if setpgid {
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		startContained(t, cmd)
		if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		// The program's PID as this process sees it: the init's child.
		var program int
		for deadline := time.Now().Add(10 * time.Second); program == 0 && time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", cmd.Process.Pid, cmd.Process.Pid))
			if f := strings.Fields(string(b)); len(f) == 1 {
				program, _ = strconv.Atoi(f[0])
			}
		}
		initGroup, programGroup := pgrpOf(t, cmd.Process.Pid), pgrpOf(t, program)
		cmd.Process.Kill()
		cmd.Wait()
		self := syscall.Getpgrp()
		switch {
		case program == 0:
			t.Errorf("setpgid %v: the init has no single child", setpgid)
		case !setpgid && (programGroup != self || initGroup == self):
			t.Errorf("default: the program is in group %d and the init in %d; want the program in the caller's %d and the init out of it", programGroup, initGroup, self)
		case setpgid && (programGroup != cmd.Process.Pid || initGroup != cmd.Process.Pid):
			t.Errorf("Setpgid: the program is in group %d and the init in %d; want both in the init's own %d", programGroup, initGroup, cmd.Process.Pid)
		}
	}
}

// pgrpOf reads process pid's process group from /proc.
func pgrpOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 3 {
		t.Fatalf("cannot parse /proc/%d/stat: %q", pid, b)
	}
	g, _ := strconv.Atoi(f[2])
	return g
}
