package shapedlink

import (
	"context"
	"net"
)

// Listen announces on address inside the namespace, as net.Listen does
// outside it: the listening socket is made in the namespace and stays
// there, and may be used from any goroutine. Give an IP literal
// (Link.ServerAddr, or ":0"): names are resolved inside the namespace,
// where only /etc/hosts answers.
func (n *Namespace) Listen(ctx context.Context, network, address string) (net.Listener, error) {
	var l net.Listener
	err := n.Do(func() error {
		var err error
		l, err = (&net.ListenConfig{}).Listen(ctx, network, address)
		return err
	})
	return l, err
}

// ListenPacket is Listen for packet networks ("udp", "udp4", "udp6", ...),
// as net.ListenPacket.
func (n *Namespace) ListenPacket(ctx context.Context, network, address string) (net.PacketConn, error) {
	var c net.PacketConn
	err := n.Do(func() error {
		var err error
		c, err = (&net.ListenConfig{}).ListenPacket(ctx, network, address)
		return err
	})
	return c, err
}

// DialContext connects to address from inside the namespace, as
// net.Dialer.DialContext does outside it; its signature is that of
// http.Transport.DialContext and of most clients' dial hooks, so a link's
// client end plugs in as it is:
//
//	client := &http.Client{Transport: &http.Transport{DialContext: link.Client().DialContext}}
//
// The socket is made in the namespace and stays there. Give an IP literal
// (Link.ServerAddr): names are resolved inside the namespace.
func (n *Namespace) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	var c net.Conn
	err := n.Do(func() error {
		var err error
		c, err = (&net.Dialer{}).DialContext(ctx, network, address)
		return err
	})
	return c, err
}
