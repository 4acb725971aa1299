package shapedlink

import (
	"errors"
	"fmt"
	"net"

	"github.com/shakenfist/quicbench/shapedlink/internal/inproc"
)

// simEnd is an end of the in-process link, behind a Namespace.
type simEnd struct {
	link  *inproc.Link
	index int
	role  string
}

// listenPacket binds an in-process UDP socket at the end.
func (e *simEnd) listenPacket(network, address string) (net.PacketConn, error) {
	c, err := e.link.ListenPacket(e.index, network, address)
	if err != nil {
		return nil, fmt.Errorf("shapedlink: the in-process link's %s end: %w", e.role, err)
	}
	return c, nil
}

// refuse is the error for what an in-process end cannot do.
func (e *simEnd) refuse(what, why string) error { return inProcessRefusal(what, e.role+" end", why) }

// inProcessRefusal says the in-process link cannot do what, at where,
// because why.
func inProcessRefusal(what, where, why string) error {
	return fmt.Errorf("shapedlink: %s at the %s: the in-process link carries datagrams only, and %s; "+
		"make UDP sockets with ListenPacket, or build the link with the %q or %q backend: %w",
		what, where, why, BackendEmulator, BackendNetem, errors.ErrUnsupported)
}

// noEgressHook is the error of an instrument or control that acts on
// end e's egress hook (nftables), which only a namespace backend has.
func noEgressHook(what string, e End) error {
	return inProcessRefusal(what, e.String()+" end", "it has no veth or nftables egress hook")
}
