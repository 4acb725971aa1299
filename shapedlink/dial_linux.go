package shapedlink

import (
	"context"
	"net"
)

// nsListen is Listen in a network namespace.
func (n *Namespace) nsListen(ctx context.Context, network, address string) (net.Listener, error) {
	var l net.Listener
	err := n.nsDo(func() error {
		var err error
		l, err = (&net.ListenConfig{}).Listen(ctx, network, address)
		return err
	})
	return l, err
}

// nsListenPacket is ListenPacket in a network namespace.
func (n *Namespace) nsListenPacket(ctx context.Context, network, address string) (net.PacketConn, error) {
	var c net.PacketConn
	err := n.nsDo(func() error {
		var err error
		c, err = (&net.ListenConfig{}).ListenPacket(ctx, network, address)
		return err
	})
	return c, err
}

// nsDialContext is DialContext from a network namespace.
func (n *Namespace) nsDialContext(ctx context.Context, network, address string) (net.Conn, error) {
	var c net.Conn
	err := n.nsDo(func() error {
		var err error
		c, err = (&net.Dialer{}).DialContext(ctx, network, address)
		return err
	})
	return c, err
}
