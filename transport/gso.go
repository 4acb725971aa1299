package transport

import (
	"fmt"
	"net"
)

// WithoutGSO wraps a UDP socket so that quic-go, given it as a
// quic.Transport's Conn, sends one datagram per write: no UDP segmentation
// offload (GSO), so every packet reaches the link, its queue limit and its
// loss as the wire-sized packet a network would carry. It is the wrapper
// the QUIC arms use, for code that drives quic-go itself (an HTTP/3
// server or client, say) over a shaped link:
//
//	pc, err := link.Server().ListenPacket(ctx, "udp", addr)
//	...
//	pc, err = transport.WithoutGSO(pc)
//	...
//	tr := &quic.Transport{Conn: pc}
//
// pc must be the *net.UDPConn that net.ListenPacket, net.ListenUDP or
// shapedlink's Namespace.ListenPacket return for a "udp" network. Unlike
// quic-go's QUIC_GO_DISABLE_GSO variable it affects only this socket, so
// one process can hold sockets with and without GSO. It keeps what quic-go
// does on its own socket (ECN, batched receive, 7 MiB buffers, the DF bit;
// see gsooff_linux.go for how); quic-go then reports
// ConnectionState().GSO false. Closing the returned conn closes pc. On an
// error pc is left open and still the caller's.
//
// quic-go uses GSO only on Linux, so elsewhere pc is returned as it is.
func WithoutGSO(pc net.PacketConn) (net.PacketConn, error) {
	uc, ok := pc.(*net.UDPConn)
	if !ok {
		return nil, fmt.Errorf("transport: WithoutGSO needs the *net.UDPConn that net.ListenPacket or a shapedlink Namespace's ListenPacket "+
			"returns for a \"udp\" network, not a %T", pc)
	}
	return withoutGSO(uc)
}
