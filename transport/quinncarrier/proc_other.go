//go:build !linux

package quinncarrier

import "syscall"

// dieWithParent is nil where there is no parent-death signal: an end
// started on this host outlives a killed caller there.
func dieWithParent() *syscall.SysProcAttr { return nil }
