package shapedlink

import "errors"

// ErrNoNetem is returned (wrapped) by New when BackendNetem was asked for
// and the kernel has no sch_netem. The userspace emulator
// (BackendEmulator, or an empty Backend to choose) works without it; where
// the kernel ships the module, modprobe sch_netem loads it.
var ErrNoNetem = errors.New("shapedlink: this kernel has no sch_netem")

// ErrNoPrivilege is wrapped by New's error when the process can build no
// namespaces.
var ErrNoPrivilege = errors.New("shapedlink: this process cannot create network namespaces")
