//go:build !linux

package shapedlink

import (
	"context"
	"net"
	"os/exec"
)

// Namespace is one network namespace of a link. Namespaces need Linux:
// elsewhere none exists, and its methods return errors wrapping
// errors.ErrUnsupported, or zero values.
type Namespace struct{}

// Role is "server", "client" or "shaper" on Linux; "" here.
func (n *Namespace) Role() string { return "" }

// String names the namespace, for logs.
func (n *Namespace) String() string { return "(no namespace: network namespaces need Linux)" }

// Inode is the namespace's inode number; here it fails.
func (n *Namespace) Inode() (uint64, error) { return 0, errUnsupported }

// Do runs fn inside the namespace; here it fails without calling fn.
func (n *Namespace) Do(fn func() error) error { return errUnsupported }

// Start starts cmd inside the namespace; here it fails without starting
// it.
func (n *Namespace) Start(cmd *exec.Cmd) error { return errUnsupported }

// Run starts cmd inside the namespace and waits for it; here it fails
// without starting it.
func (n *Namespace) Run(cmd *exec.Cmd) error { return errUnsupported }

// Listen announces on address inside the namespace; here it fails.
func (n *Namespace) Listen(ctx context.Context, network, address string) (net.Listener, error) {
	return nil, errUnsupported
}

// ListenPacket is Listen for packet networks; here it fails.
func (n *Namespace) ListenPacket(ctx context.Context, network, address string) (net.PacketConn, error) {
	return nil, errUnsupported
}

// DialContext connects to address from inside the namespace; here it
// fails.
func (n *Namespace) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	return nil, errUnsupported
}
