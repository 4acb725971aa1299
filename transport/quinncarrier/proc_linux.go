package quinncarrier

import "syscall"

// dieWithParent makes an end started on this host die with this process.
func dieWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
