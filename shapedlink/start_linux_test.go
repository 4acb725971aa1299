package shapedlink

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const envStartKillChild = "QUICBENCH_TEST_START_KILL_CHILD"

// TestStartedCommandsDieWithProcess kills outright (SIGKILL) a process that
// holds a link and has started, with Namespace.Start, a shell wrapper whose
// child sleeps (client side) and a command with a child that daemonised
// itself into a session of its own (server side). Every one of those
// processes must go, and with them every network namespace they held.
func TestStartedCommandsDieWithProcess(t *testing.T) {
	needNamespaces(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	token := fmt.Sprintf("%s=%d-%d", envStartKillChild, os.Getpid(), time.Now().UnixNano())
	cmd := exec.CommandContext(ctx, "/proc/self/exe", "-test.run=^TestStartKillChild$", "-test.count=1", "-test.v")
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
	var inodes [2]uint64
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if _, err := fmt.Sscanf(sc.Text(), "START-KILL-READY ns=%d,%d", &inodes[0], &inodes[1]); err == nil {
			break
		}
	}
	if inodes[0] == 0 {
		t.Fatalf("the helper never reported its link (scan error %v)", sc.Err())
	}
	go io.Copy(io.Discard, stdout)

	// The three sleeps (the wrapper's child, the server command's own,
	// the daemon's) must run, and between them hold both namespaces,
	// before the kill; otherwise the check after it proves nothing.
	var sleeps []int
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		sleeps = commNamed(procsWith(token), "sleep")
		if len(sleeps) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the helper's commands did not start three sleeps (found %v)", sleeps)
		}
	}
	held := nsInodes(sleeps)
	if !held[inodes[0]] || !held[inodes[1]] {
		t.Fatalf("the sleeps %v do not hold both namespaces %v; the check below would prove nothing", sleeps, inodes)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	// The minute only bounds the wait: the kernel kills the PID
	// namespaces' processes as soon as their inits die.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
		procs := procsWith(token)
		live := nsInodes(procs)
		if len(procs) == 0 && !live[inodes[0]] && !live[inodes[1]] {
			return
		}
		if time.Now().After(deadline) {
			for _, p := range procs {
				syscall.Kill(p, syscall.SIGKILL) // leave nothing to the next test
			}
			t.Fatalf("a minute after the helper was killed, its processes %v are still running (sleeps among them: %v), holding namespaces %v of %v",
				procs, commNamed(procs, "sleep"), live, inodes)
		}
	}
}

// TestStartKillChild is the helper of TestStartedCommandsDieWithProcess.
func TestStartKillChild(t *testing.T) {
	if os.Getenv(envStartKillChild) == "" {
		t.Skip("helper for TestStartedCommandsDieWithProcess")
	}
	p, _ := ParseProfile("20:10")
	l, err := New(context.Background(), p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	start := func(ns *Namespace, script string) {
		cmd := exec.Command("sh", "-c", script)
		// What the examples ask for: the command dies with this process.
		// Its children do not inherit that.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := ns.Start(cmd); err != nil {
			t.Fatal(err)
		}
	}
	// "; true" keeps the shell from exec'ing its last command: it stays a
	// wrapper with a child.
	start(l.Client(), "sleep 300; true")
	start(l.Server(), "setsid sh -c 'sleep 301 </dev/null >/dev/null 2>&1 &'; sleep 302; true")
	si, _ := l.Server().Inode()
	ci, _ := l.Client().Inode()
	fmt.Printf("START-KILL-READY ns=%d,%d\n", si, ci)
	time.Sleep(time.Minute) // killed long before this
}

// procsWith lists the live (not zombie) processes whose environment holds
// the entry kv: the processes of one run of a test, and no others.
func procsWith(kv string) []int {
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		env, err := os.ReadFile(p + "/environ") // empty for a zombie
		if err != nil {
			continue
		}
		if slices.ContainsFunc(bytes.Split(env, []byte{0}), func(e []byte) bool { return string(e) == kv }) {
			if pid, err := strconv.Atoi(filepath.Base(p)); err == nil {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// commNamed are the processes among pids whose command name is comm.
func commNamed(pids []int, comm string) []int {
	var out []int
	for _, p := range pids {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p)); err == nil && strings.TrimSpace(string(b)) == comm {
			out = append(out, p)
		}
	}
	return out
}

// TestShaperHasItsOwnProcessGroup: the emulator's shaper stops on SIGINT,
// so it must not be in this process's group, to which a terminal sends
// Ctrl-C when a program runs over the link in the foreground.
func TestShaperHasItsOwnProcessGroup(t *testing.T) {
	l := newTestLink(t, "20:10", BackendEmulator)
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", l.Instruments().EmulatorPID()))
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) state ppid pgrp ...: comm may hold spaces.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 3 {
		t.Fatalf("cannot parse /proc/PID/stat: %q", b)
	}
	if pgrp, _ := strconv.Atoi(f[2]); pgrp == syscall.Getpgrp() {
		t.Errorf("the shaper is in this process's group %d: a terminal's Ctrl-C would stop the link", pgrp)
	}
}
