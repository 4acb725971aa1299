//go:build !linux

package rig

import "syscall"

// killWithParent is the SysProcAttr of a role process. Only Linux has a
// parent-death signal; elsewhere there is none to ask for (and no namespace
// to start a role in: shapedlink.Namespace.Start fails).
func killWithParent() *syscall.SysProcAttr { return nil }
