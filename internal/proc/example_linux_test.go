package proc_test

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/shakenfist/quicbench/internal/proc"
)

// A child that must die with its parent (Pdeathsig) is started from the
// permanent starter thread, so that it is not killed early when whichever
// thread happened to call Start is ended by the Go runtime.
func ExampleStart() {
	cmd := exec.Command("sh", "-c", "echo started")
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := proc.Start(cmd); err != nil {
		fmt.Println(err)
		return
	}
	buf := make([]byte, 64)
	n, _ := out.Read(buf)
	fmt.Print(string(buf[:n]))
	fmt.Println(cmd.Wait())
	// Output:
	// started
	// <nil>
}

// A command whose children must not outlive it, or this process, is
// started contained: in a PID namespace of its own (here in this
// process's network namespace), under an init that dies with this
// process. When the shell exits, its background sleep is killed with it.
func ExampleStartContained() {
	cmd := exec.Command("sh", "-c", "sleep 600 & echo started in $$")
	cmd.Stdout = os.Stdout
	if err := proc.StartContained(cmd, -1); err != nil {
		fmt.Println(err) // needs root, or root of a user namespace
		return
	}
	fmt.Println(cmd.Wait())
}
