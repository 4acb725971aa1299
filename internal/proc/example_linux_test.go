package proc_test

import (
	"fmt"
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
