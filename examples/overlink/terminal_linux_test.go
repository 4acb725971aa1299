package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/examples/internal/cmdtest"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
	"golang.org/x/sys/unix"
)

// openPty opens a new pseudo-terminal and returns its master and slave.
func openPty(t *testing.T) (*os.File, *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(master.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	slave, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	return master, slave
}

var intCount = regexp.MustCompile(`INT count (\d+)`)

// TestCtrlCReachesClientOnce runs overlink in the foreground of a terminal
// and types Ctrl-C while the client runs: the client gets one SIGINT (not
// one more passed on by overlink, or by its init), and the link survives it
// (the emulator's shaper, which stops on SIGINT, is not in the terminal's
// foreground group).
func TestCtrlCReachesClientOnce(t *testing.T) {
	shapedlinktest.Need(t)
	master, slave := openPty(t)
	defer master.Close()
	dir := cmdtest.OpenDir(t, 0)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	script := `n=0; trap 'n=$((n+1))' INT; echo ready; i=0; while [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); done; echo "INT count $n"`
	cmd := cmdtest.Command(ctx, t, 0, dir, "-profile", "20:10", "--", "sh", "-c", script)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	// A session of its own with the terminal as its controlling terminal:
	// overlink's group is then the terminal's foreground, as in a shell.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	out := bufio.NewReader(master)
	var text strings.Builder
	readUntil := func(s string) bool {
		for !strings.Contains(text.String(), s) {
			line, err := out.ReadString('\n')
			text.WriteString(line)
			if err != nil {
				return false
			}
		}
		return true
	}
	if !readUntil("ready") {
		t.Fatalf("the client never started:\n%s", text.String())
	}
	master.Write([]byte{3}) // Ctrl-C
	if !readUntil("INT count") {
		t.Fatalf("the client never reported:\n%s", text.String())
	}
	readUntil("overlink:") // the summary line, or the end of the output
	cmd.Wait()
	m := intCount.FindStringSubmatch(text.String())
	if m == nil || m[1] != "1" {
		t.Errorf("the client counted %v SIGINTs for one Ctrl-C, want 1:\n%s", m, text.String())
	}
	if strings.Contains(text.String(), "link broke") || cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("exit status %d, want 0 and the link intact:\n%s", cmd.ProcessState.ExitCode(), text.String())
	}
}
