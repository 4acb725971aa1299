package gorun

import (
	"fmt"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// goCommand is the name the go command runs under.
var goCommand = "go"

// Follow sends this process SIGTERM when its parent ends, if its parent
// is the go command. It reports whether it did arrange that.
func Follow() bool {
	ppid := os.Getppid()
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", ppid))
	if err != nil || strings.TrimSpace(string(comm)) != goCommand {
		return false
	}
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0); err != nil {
		return false
	}
	if os.Getppid() != ppid {
		// The parent ended before the request was made.
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}
	return true
}
