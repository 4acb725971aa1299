package transport

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/quic-go/quic-go"
)

// This file is the socket under each QUIC connection: a UDP socket behind
// the GSO-off wrapper (or not, with AllowGSO), or another PacketConn as it
// is, and what it had in force.

// udpEndpoint is a socket prepared for quic-go: a UDP socket, wrapped
// (GSO off) unless the options allow GSO; or a net.PacketConn that is not
// a UDP socket (an in-process link's end, say), as it is.
type udpEndpoint struct {
	pc      net.PacketConn // what quic-go gets
	real    udpSocket      // the UDP socket (or test spy) underneath; nil for another PacketConn
	wrapped bool
	// routes turns unroutable sends into loss once armed (nil for another
	// PacketConn).
	routes *routeLossConn
	// plain is the Go type of a PacketConn that is not a UDP socket.
	plain string
}

func newUDPEndpoint(ctx context.Context, network, addr string, o Options) (*udpEndpoint, error) {
	listen := o.ListenPacket
	if listen == nil {
		listen = (&net.ListenConfig{}).ListenPacket
	}
	pc, err := listen(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	uc, ok := pc.(*net.UDPConn)
	if !ok {
		// quic-go reads and writes such a conn one datagram per call,
		// with no GSO (so there is nothing to wrap) and no ECN.
		return &udpEndpoint{pc: pc, plain: fmt.Sprintf("%T", pc)}, nil
	}
	var s udpSocket = uc
	if o.wrapUDP != nil {
		s = o.wrapUDP(s)
	}
	routes := &routeLossConn{udpSocket: s}
	s = routes
	if o.AllowGSO {
		return &udpEndpoint{pc: s, real: s, routes: routes}, nil
	}
	w, err := newGSOOffConn(s)
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	return &udpEndpoint{pc: w, real: s, wrapped: true, routes: routes}, nil
}

// keepThroughNoRoute arms the endpoint's socket to count a send that
// finds no route as a lost packet instead of failing it (routeLossConn).
// Call it once the socket's connection is up.
func (ep *udpEndpoint) keepThroughNoRoute() {
	if ep.routes != nil {
		ep.routes.armed.Store(true)
	}
}

// state is what the endpoint's socket has in force, read back from the
// kernel for a UDP socket.
func (ep *udpEndpoint) state() UDPSocketState {
	if ep.real == nil {
		return UDPSocketState{PacketConn: ep.plain, MTUDiscover: -1}
	}
	return readUDPSocketState(ep.real, ep.wrapped)
}

// checkGSO fails loudly if a connection uses GSO although the wrapper is on.
func checkGSO(conn *quic.Conn, ep *udpEndpoint) error {
	if ep.wrapped && conn.ConnectionState().GSO {
		return errors.New("quic-go reports GSO in use although the GSO-off wrapper is on: the wrapper no longer works with this quic-go; refusing to run")
	}
	return nil
}
