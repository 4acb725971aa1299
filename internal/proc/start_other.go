//go:build !linux

package proc

import (
	"errors"
	"os/exec"
)

// Start starts cmd. Only Linux has parent-death signals tied to threads;
// elsewhere this is cmd.Start.
func Start(cmd *exec.Cmd) error { return cmd.Start() }

// StartInNetns fails: network namespaces are Linux only.
func StartInNetns(cmd *exec.Cmd, netnsFD int) error {
	return errors.New("proc: network namespaces are Linux only")
}

// StartContained fails: PID and network namespaces are Linux only.
func StartContained(cmd *exec.Cmd, netnsFD int) error {
	return errors.New("proc: PID namespaces are Linux only")
}

// StartPrivateTmp fails: mount namespaces are Linux only.
func StartPrivateTmp(cmd *exec.Cmd, keep ...string) (func(), error) {
	return nil, errors.New("proc: mount namespaces are Linux only")
}
