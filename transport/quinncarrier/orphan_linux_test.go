package quinncarrier

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const orphanEnv = "QUINNCARRIER_ORPHAN_HELPER"

// TestOrphanHelper is the process TestEndDiesWithItsCaller kills: it
// starts a server end on this host, prints its pid and waits.
func TestOrphanHelper(t *testing.T) {
	if os.Getenv(orphanEnv) == "" {
		t.Skip("run by TestEndDiesWithItsCaller")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cert, err := NewCertificate()
	if err != nil {
		t.Fatal(err)
	}
	// Start from a goroutine that ends at once: the end must outlive it.
	started := make(chan *End)
	go func() {
		e, err := StartServer(t.Context(), Config{Controller: "cubic", Dir: t.TempDir()}, nil,
			"127.0.0.1:0", []string{ln.Addr().String()}, cert)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		started <- e
	}()
	e := <-started
	fmt.Println(e.Ready().PID)
	time.Sleep(2 * time.Second)
	if syscall.Kill(e.Ready().PID, 0) != nil {
		fmt.Println("error: the end died while its caller lived")
	}
	fmt.Println("alive")
	time.Sleep(time.Minute)
}

// An end started on this host dies when the process that started it is
// killed, and not before.
func TestEndDiesWithItsCaller(t *testing.T) {
	needBinary(t)
	bin, err := Binary(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestOrphanHelper$", "-test.v")
	cmd.Env = append(os.Environ(), orphanEnv+"=1", BinaryEnv+"="+bin)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(out)
	pid := 0
	for pid == 0 && sc.Scan() {
		pid, _ = strconv.Atoi(sc.Text())
	}
	if pid == 0 {
		t.Fatal("the helper printed no pid")
	}
	for sc.Scan() && sc.Text() != "alive" {
		if strings.HasPrefix(sc.Text(), "error:") {
			t.Fatal(sc.Text())
		}
	}
	if syscall.Kill(pid, 0) != nil {
		t.Fatal("the end died before its caller was killed")
	}
	cmd.Process.Kill()
	cmd.Wait()
	for range 50 {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("the end (pid %d) outlived its killed caller", pid)
}
