//go:build !linux

package quinncarrier

import (
	"errors"
	"os/exec"
	"syscall"
)

// startHere starts cmd on this host. There is no parent-death signal here:
// an end outlives a killed caller.
func startHere(cmd *exec.Cmd, _ <-chan struct{}) error { return cmd.Start() }

// SocketNamespace is a socket's network namespace, on Linux only.
type SocketNamespace struct{}

// NamespaceOf fails: network namespaces are Linux's.
func NamespaceOf(syscall.Conn) (*SocketNamespace, error) {
	return nil, errors.New("quinncarrier: network namespaces are Linux's")
}

// Close does nothing.
func (*SocketNamespace) Close() error { return nil }

type nsStarter struct{ *SocketNamespace }

func (n nsStarter) Start(cmd *exec.Cmd) error { return n.start(cmd, nil) }

func (*SocketNamespace) start(cmd *exec.Cmd, done <-chan struct{}) error { return startHere(cmd, done) }
