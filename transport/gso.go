package transport

import (
	"fmt"
	"net"
)

// WithoutGSO wraps a UDP socket so that quic-go, given it as a
// quic.Transport's Conn, sends one wire-sized datagram per write, without
// UDP segmentation offload, as the QUIC arms' sockets do; for code that
// drives quic-go itself (HTTP/3, say) over a shaped link:
//
//	pc, err = transport.WithoutGSO(pc)
//	tr := &quic.Transport{Conn: pc}
//
// pc must be the *net.UDPConn of a "udp" net.ListenPacket, net.ListenUDP
// or shapedlink Namespace.ListenPacket. Only this socket is affected; ECN,
// batched receive and buffer sizes are kept, and quic-go reports
// ConnectionState().GSO false. Closing the returned conn closes pc; on an
// error pc stays open and the caller's. Elsewhere than Linux, where
// quic-go uses no GSO, pc is returned as it is.
func WithoutGSO(pc net.PacketConn) (net.PacketConn, error) {
	uc, ok := pc.(*net.UDPConn)
	if !ok {
		return nil, fmt.Errorf("transport: WithoutGSO needs the *net.UDPConn that net.ListenPacket or a shapedlink Namespace's ListenPacket "+
			"returns for a \"udp\" network, not a %T", pc)
	}
	return withoutGSO(uc)
}
