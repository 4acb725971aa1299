//go:build !linux

package shapedlink

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
)

// Namespace is one end of a link. Network namespaces need Linux: here
// the only ends are the in-process link's (sim set), and what would need a
// namespace returns an error wrapping errors.ErrUnsupported.
type Namespace struct {
	role string
	sim  *simEnd
}

func (n *Namespace) nsString() string {
	return n.role + " (no namespace: network namespaces need Linux)"
}
func (n *Namespace) nsInode() (uint64, error)   { return 0, errUnsupported }
func (n *Namespace) nsDo(fn func() error) error { return errUnsupported }
func (n *Namespace) nsStart(cmd *exec.Cmd) error {
	return errUnsupported
}
func (n *Namespace) nsListen(ctx context.Context, network, address string) (net.Listener, error) {
	return nil, errUnsupported
}
func (n *Namespace) nsListenPacket(ctx context.Context, network, address string) (net.PacketConn, error) {
	return nil, errUnsupported
}
func (n *Namespace) nsDialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return nil, errUnsupported
}

// errUnsupported is the error of whatever needs network namespaces.
var errUnsupported = fmt.Errorf("shapedlink: %w: network namespaces need Linux (BackendInProcess works on any system)", errors.ErrUnsupported)
