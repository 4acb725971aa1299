package transport

import (
	"net"
	"sync/atomic"
)

// routeLossConn turns a send that fails for want of a route into a lost
// packet, once armed. quic-go ends a connection on any send error but
// EMSGSIZE, and a client whose addresses change sees exactly these errors
// for a moment: Linux, removing a subnet's primary address, drops the
// subnet's route before it adds the promoted secondary's, and a send in
// between fails with ENETUNREACH. An established connection should ride
// that out as loss; a dial should not, so a socket is armed only once its
// connection is up (see isUnroutable for the errors).
type routeLossConn struct {
	udpSocket
	armed   atomic.Bool
	dropped atomic.Int64
}

func (c *routeLossConn) lost(err error) bool {
	if err == nil || !c.armed.Load() || !isUnroutable(err) {
		return false
	}
	c.dropped.Add(1)
	return true
}

func (c *routeLossConn) WriteMsgUDP(b, oob []byte, addr *net.UDPAddr) (int, int, error) {
	n, oobn, err := c.udpSocket.WriteMsgUDP(b, oob, addr)
	if c.lost(err) {
		return len(b), len(oob), nil
	}
	return n, oobn, err
}

func (c *routeLossConn) WriteTo(b []byte, addr net.Addr) (int, error) {
	n, err := c.udpSocket.WriteTo(b, addr)
	if c.lost(err) {
		return len(b), nil
	}
	return n, err
}

func (c *routeLossConn) Write(b []byte) (int, error) {
	n, err := c.udpSocket.Write(b)
	if c.lost(err) {
		return len(b), nil
	}
	return n, err
}
