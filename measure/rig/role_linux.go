package rig

import "syscall"

// killWithParent is the SysProcAttr of a role process: SIGKILL when the
// thread that forked it exits (see RoleEnv.Start).
func killWithParent() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
