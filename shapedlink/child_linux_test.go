package shapedlink

import (
	"bufio"
	"bytes"
	"context"
	"errors"
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

	"github.com/google/nftables"
	"github.com/vishvananda/netlink"
)

const (
	envUnprivChild  = "QUICBENCH_TEST_UNPRIV_CHILD"
	envCleanupChild = "QUICBENCH_TEST_CLEANUP_CHILD"
)

// copyTestBinary copies the running test binary into a directory any user
// can read, so it can be run as uid 65534.
func copyTestBinary(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "shapedlink-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst := filepath.Join(dir, "shapedlink.test")
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, src); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	return dst
}

// TestUnprivilegedMode runs the test binary as uid 65534 (nobody), which
// must re-execute itself into a user namespace and build an emulated, lossy
// link there.
func TestUnprivilegedMode(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to start a child as uid 65534")
	}
	bin := copyTestBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "-test.run=^TestUnprivilegedChild$", "-test.v", "-test.count=1")
	cmd.Env = []string{envUnprivChild + "=1", "PATH=/usr/bin:/bin"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	text := string(out)
	if strings.Contains(text, "UNPRIV-SKIP") {
		t.Skipf("unprivileged user namespaces are not available here: %s", text)
	}
	if err != nil || !strings.Contains(text, "UNPRIV-OK") {
		t.Fatalf("unprivileged child failed (%v):\n%s", err, text)
	}
	for _, line := range strings.Split(text, "\n") {
		if strings.Contains(line, "UNPRIV-") {
			t.Log(strings.TrimSpace(line))
		}
	}
}

// TestUnprivilegedChild is the child of TestUnprivilegedMode; it does
// nothing unless that test started it.
func TestUnprivilegedChild(t *testing.T) {
	if os.Getenv(envUnprivChild) == "" {
		t.Skip("helper for TestUnprivilegedMode")
	}
	if os.Getenv(envReexeced) == "" {
		// Before re-execution: we are uid 65534 in the host namespace
		// and cannot build anything.
		if _, err := resolveMode(ModeAuto); !errors.Is(err, ErrNoPrivilege) {
			t.Fatalf("as uid %d, resolveMode = %v, want ErrNoPrivilege", os.Getuid(), err)
		} else {
			fmt.Println("UNPRIV-BEFORE", err)
		}
	}
	if err := Reexec(); err != nil { // exits unless we are already privileged
		fmt.Println("UNPRIV-SKIP", err)
		return
	}
	p, err := ParseProfile("20:10:1")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l, err := New(ctx, p, Options{Mode: ModeUnprivileged, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Mode() != ModeUnprivileged {
		t.Errorf("Mode() = %q", l.Mode())
	}
	checkOffload(t, l, map[Backend]int{BackendNetem: 2, BackendEmulator: 4}[l.Backend()])
	if l.Backend() == BackendEmulator {
		checkShaperBuffers(t, l)
	}
	srv, cli := udpPair(t, l)
	var rtt time.Duration
	for i := 0; i < 5; i++ { // 1% loss each way
		if rtt, err = echoRoundTrip(t, srv, cli, time.Second); err == nil {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := tcpExchange(t, l); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("UNPRIV-OK mode=%s backend=%s rtt=%v applied=%q\n", l.Mode(), l.Backend(), rtt, l.Applied())
}

// treeProcs lists the live (not zombie) processes whose environment holds
// envCleanupChild=token: the child TestCleanupAfterKill started and every
// process it started (they inherit its environment), and no other process
// on the machine, even one running this same test at the same time.
func treeProcs(token string) []int {
	want := []byte(envCleanupChild + "=" + token)
	var pids []int
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		env, err := os.ReadFile(p + "/environ") // empty for a zombie
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, want) {
				if pid, err := strconv.Atoi(filepath.Base(p)); err == nil {
					pids = append(pids, pid)
				}
				break
			}
		}
	}
	return pids
}

// nsInodes lists every network namespace inode the processes pids refer to
// (as a thread's namespace or through an open descriptor). Only the
// processes that could hold a namespace are looked at: an inode number is
// reused as soon as its namespace is freed, so another process's new
// namespace may carry it a moment later.
func nsInodes(pids []int) map[uint64]bool {
	seen := map[uint64]bool{}
	for _, pid := range pids {
		p := "/proc/" + strconv.Itoa(pid)
		links, _ := filepath.Glob(p + "/task/*/ns/net")
		fds, _ := filepath.Glob(p + "/fd/*")
		for _, f := range append(links, fds...) {
			target, err := os.Readlink(f)
			if err != nil {
				continue
			}
			if s, ok := strings.CutPrefix(target, "net:["); ok {
				if n, err := strconv.ParseUint(strings.TrimSuffix(s, "]"), 10, 64); err == nil {
					seen[n] = true
				}
			}
		}
	}
	return seen
}

// TestCleanupAfterKill kills a child that holds a link, mid-run, and checks
// that nothing of it remains: no namespace, no shaper process, no veth or
// nftables table in the host namespace.
func TestCleanupAfterKill(t *testing.T) {
	needNamespaces(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/proc/self/exe", "-test.run=^TestCleanupChild$", "-test.v", "-test.count=1")
	// A token of this run's own, so the checks below see this child's
	// processes and not those of a concurrent run of the same test.
	token := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	cmd.Env = append(os.Environ(), envCleanupChild+"="+token)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var ready string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "CLEANUP-READY") {
			ready = line
			break
		}
	}
	if ready == "" {
		t.Fatalf("the child never reported its link (scan error %v)", sc.Err())
	}
	go io.Copy(io.Discard, stdout)
	t.Log(ready)
	var shaper int
	var inodes [3]uint64
	if _, err := fmt.Sscanf(ready, "CLEANUP-READY shaper=%d ns=%d,%d,%d", &shaper, &inodes[0], &inodes[1], &inodes[2]); err != nil {
		t.Fatalf("parsing %q: %v", ready, err)
	}
	if !slices.Contains(treeProcs(token), shaper) {
		t.Fatalf("the shaper %d is not among the child's processes %v; the check below would prove nothing", shaper, treeProcs(token))
	}
	if live := nsInodes(treeProcs(token)); !live[inodes[0]] || !live[inodes[1]] {
		t.Fatalf("the child's namespaces %v are not visible while it runs; the check below would prove nothing", inodes)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	// The shaper dies of its parent-death signal, asynchronously. The
	// minute only bounds the wait; a clean run leaves at once.
	deadline := time.Now().Add(time.Minute)
	for {
		var left []string
		procs := treeProcs(token)
		live := nsInodes(procs)
		for _, ino := range inodes {
			if ino != 0 && live[ino] {
				left = append(left, fmt.Sprintf("namespace net:[%d]", ino))
			}
		}
		for _, pid := range procs {
			left = append(left, fmt.Sprintf("process %d", pid))
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the child was killed, these remain: %s (the shaper was %d)", strings.Join(left, ", "), shaper)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Nothing was ever created in the host namespace; check that holds.
	links, err := netlink.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links {
		switch l.Attrs().Name {
		case serverDev, clientDev, shaperSideSrv, shaperSideCli:
			t.Errorf("the host namespace has a %s device", l.Attrs().Name)
		}
	}
	c, err := nftables.New()
	if err != nil {
		t.Fatal(err)
	}
	tables, err := c.ListTables()
	if err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("%s%d_", tablePrefix, cmd.Process.Pid)
	for _, tb := range tables {
		if strings.HasPrefix(tb.Name, prefix) {
			t.Errorf("the host namespace has the child's nftables table %s", tb.Name)
		}
	}
}

// TestCleanupChild is the child of TestCleanupAfterKill.
func TestCleanupChild(t *testing.T) {
	if os.Getenv(envCleanupChild) == "" {
		t.Skip("helper for TestCleanupAfterKill")
	}
	p, _ := ParseProfile("20:10")
	l, err := New(context.Background(), p, Options{Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	var inodes [3]uint64
	for i, ns := range []*Namespace{l.server, l.client, l.shaperNS} {
		if ns != nil {
			inodes[i], _ = ns.Inode()
		}
	}
	fmt.Printf("CLEANUP-READY shaper=%d ns=%d,%d,%d\n", l.Instruments().EmulatorPID(), inodes[0], inodes[1], inodes[2])
	time.Sleep(time.Minute) // killed long before this
}
