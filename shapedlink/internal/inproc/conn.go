package inproc

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strconv"
	"sync"
	"time"
)

// This file is the link's sockets: each end's table of bound ports, and
// the net.PacketConn a program reads and writes.

const (
	// maxPayload is the largest datagram payload the link carries: its
	// 1500-byte MTU less the IPv4 and UDP headers. The link does not
	// fragment.
	maxPayload = 1500 - 20 - 8
	// defaultReadBuffer is a socket's receive queue, in payload bytes,
	// until SetReadBuffer changes it: Linux's default (net.core.rmem_default).
	defaultReadBuffer = 212992
	firstEphemeral    = 32768 // Linux's ip_local_port_range starts here
)

// end is one end of the link: its address and its bound sockets.
type end struct {
	link  *Link
	index int
	addr  netip.Addr

	mu       sync.Mutex
	ports    map[uint16]*conn
	nextPort uint16
	closed   bool // the link was closed: no socket may be bound any more
}

func newEnd(l *Link, i int) *end {
	return &end{link: l, index: i, addr: l.addrs[i], ports: map[uint16]*conn{}, nextPort: firstEphemeral}
}

// bound is the socket bound to port, or nil.
func (e *end) bound(port uint16) *conn {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ports[port]
}

// closeAll closes every socket of the end, and refuses any bound after.
func (e *end) closeAll() {
	e.mu.Lock()
	e.closed = true
	conns := make([]*conn, 0, len(e.ports))
	for _, c := range e.ports {
		conns = append(conns, c)
	}
	e.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
}

// ListenPacket returns a socket bound at end e (0 or 1) to address, as
// net.ListenPacket does: network "udp" or "udp4", address "host:port"
// with host the end's address, empty or 0.0.0.0, and port 0 for the next
// free one from 32768 up (an empty address is ":0").
func (l *Link) ListenPacket(e int, network, address string) (net.PacketConn, error) {
	if e != 0 && e != 1 {
		return nil, fmt.Errorf("inproc: end %d does not exist; the ends are 0 and 1", e)
	}
	end := l.ends[e]
	if network != "udp" && network != "udp4" {
		return nil, &net.OpError{Op: "listen", Net: network, Err: fmt.Errorf(
			"the in-process link carries UDP over IPv4 only (network %q); use \"udp\" or \"udp4\"", network)}
	}
	if address == "" {
		address = ":0" // as net.ListenPacket takes it
	}
	host, portText, err := net.SplitHostPort(address)
	if err != nil {
		return nil, &net.OpError{Op: "listen", Net: network, Err: err}
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, &net.OpError{Op: "listen", Net: network, Err: fmt.Errorf("port %q is not a number from 0 to 65535", portText)}
	}
	if host != "" && host != "0.0.0.0" && host != end.addr.String() {
		return nil, &net.OpError{Op: "listen", Net: network, Err: fmt.Errorf(
			"cannot bind to %s: this end's only address is %s (leave the host empty, or give that address)", host, end.addr)}
	}
	if testHookListen != nil {
		testHookListen()
	}
	// The end's lock orders this against Link.Close, which marks the end
	// closed under it before closing what is bound.
	end.mu.Lock()
	defer end.mu.Unlock()
	if end.closed {
		return nil, &net.OpError{Op: "listen", Net: network, Err: errLinkClosed}
	}
	if port == 0 {
		for n := 0; ; n++ {
			if n > 65535-firstEphemeral {
				return nil, &net.OpError{Op: "listen", Net: network, Err: errors.New("no free port left from 32768 up")}
			}
			p := end.nextPort
			end.nextPort++
			if end.nextPort == 0 {
				end.nextPort = firstEphemeral
			}
			if end.ports[p] == nil {
				port = uint64(p)
				break
			}
		}
	} else if end.ports[uint16(port)] != nil {
		return nil, &net.OpError{Op: "listen", Net: network, Err: fmt.Errorf("address %s:%d already in use", end.addr, port)}
	}
	c := &conn{end: end, local: netip.AddrPortFrom(end.addr, uint16(port)), rcvbuf: defaultReadBuffer,
		closedCh: make(chan struct{}), ready: make(chan struct{}, 1), deadlineCh: make(chan struct{})}
	end.ports[uint16(port)] = c
	return c, nil
}

// testHookListen, when set by a test, runs in ListenPacket after its
// arguments are checked and before the socket is bound.
var testHookListen func()

// datagram is one datagram waiting in a socket's queue.
type datagram struct {
	from netip.AddrPort
	data []byte
}

// conn is a socket at one end of the link.
type conn struct {
	end   *end
	local netip.AddrPort

	mu       sync.Mutex
	queue    []datagram
	head     int
	queued   int // payload bytes in queue
	rcvbuf   int
	closed   bool
	closedCh chan struct{}
	ready    chan struct{} // a datagram was queued
	// The read deadline and a channel closed when it changes, so a
	// blocked read takes the new one; the write deadline.
	readDeadline, writeDeadline time.Time
	deadlineCh                  chan struct{}
}

// push queues a datagram for the reader, or refuses it when the queue
// would exceed the receive buffer or the socket is closed.
func (c *conn) push(from netip.AddrPort, data []byte) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.queued+len(data) > c.rcvbuf {
		return false
	}
	c.queue = append(c.queue, datagram{from: from, data: data})
	c.queued += len(data)
	select {
	case c.ready <- struct{}{}:
	default:
	}
	return true
}

// pop takes the oldest datagram; the caller holds c.mu and has checked
// there is one.
func (c *conn) pop() datagram {
	d := c.queue[c.head]
	c.queue[c.head] = datagram{}
	c.head++
	c.queued -= len(d.data)
	if c.head == len(c.queue) {
		c.queue, c.head = c.queue[:0], 0
	} else {
		// Another reader may be waiting for the one left.
		select {
		case c.ready <- struct{}{}:
		default:
		}
	}
	return d
}

func (c *conn) opErr(op string, addr net.Addr, err error) error {
	return &net.OpError{Op: op, Net: "udp", Source: net.UDPAddrFromAddrPort(c.local), Addr: addr, Err: err}
}

// ReadFrom reads the next datagram, waiting for one until the read
// deadline or Close; a datagram longer than p is cut short, as a UDP
// socket's is. Once the deadline has passed it fails with a timeout,
// whatever is queued.
func (c *conn) ReadFrom(p []byte) (int, net.Addr, error) {
	for {
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			return 0, nil, c.opErr("read", nil, net.ErrClosed)
		}
		deadline, changed := c.readDeadline, c.deadlineCh
		// A deadline that has passed fails the read even with datagrams
		// queued, as a UDP socket's does.
		wait := time.Until(deadline)
		if !deadline.IsZero() && wait <= 0 {
			c.mu.Unlock()
			return 0, nil, c.opErr("read", nil, os.ErrDeadlineExceeded)
		}
		if c.head < len(c.queue) {
			d := c.pop()
			c.mu.Unlock()
			return copy(p, d.data), net.UDPAddrFromAddrPort(d.from), nil
		}
		c.mu.Unlock()
		var timeout <-chan time.Time
		var timer *time.Timer
		if !deadline.IsZero() {
			timer = time.NewTimer(wait)
			timeout = timer.C
		}
		select {
		case <-c.ready:
		case <-changed:
		case <-c.closedCh:
		case <-timeout:
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// WriteTo sends p to addr, which must be a port at the other end's
// address: it crosses the link's model now and reaches the socket bound
// there when it is due. It never blocks: the link's limit and the
// receiver's queue decide what is dropped.
func (c *conn) WriteTo(p []byte, addr net.Addr) (int, error) {
	to, err := addrPort(addr)
	if err != nil {
		return 0, c.opErr("write", addr, err)
	}
	c.mu.Lock()
	closed, deadline := c.closed, c.writeDeadline
	c.mu.Unlock()
	switch peer := c.end.link.addrs[1-c.end.index]; {
	case closed:
		return 0, c.opErr("write", addr, net.ErrClosed)
	case !deadline.IsZero() && !time.Now().Before(deadline):
		return 0, c.opErr("write", addr, os.ErrDeadlineExceeded)
	case len(p) > maxPayload:
		return 0, c.opErr("write", addr, fmt.Errorf(
			"message too long: a %d-byte datagram exceeds the link's 1500-byte MTU (at most %d bytes of payload), and the link does not fragment", len(p), maxPayload))
	case to.Addr() != peer:
		return 0, c.opErr("write", addr, fmt.Errorf("no route to %s: this end (%s) reaches only the other end's address, %s", to.Addr(), c.local.Addr(), peer))
	}
	if err := c.end.link.dirs[c.end.index].send(c.local, to, p); err != nil {
		return 0, c.opErr("write", addr, err)
	}
	return len(p), nil
}

// addrPort reads a destination address: a *net.UDPAddr, or anything
// whose String is "ip:port".
func addrPort(addr net.Addr) (netip.AddrPort, error) {
	if u, ok := addr.(*net.UDPAddr); ok && u != nil {
		ap := u.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
	}
	if addr == nil {
		return netip.AddrPort{}, errors.New("no destination address")
	}
	ap, err := netip.ParseAddrPort(addr.String())
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("destination %q is not an ip:port: %w", addr.String(), err)
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
}

// Close unbinds the socket, drops what it had queued and wakes its
// readers.
func (c *conn) Close() error {
	c.end.mu.Lock()
	if c.end.ports[c.local.Port()] == c {
		delete(c.end.ports, c.local.Port())
	}
	c.end.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.opErr("close", nil, net.ErrClosed)
	}
	c.closed = true
	c.queue, c.head, c.queued = nil, 0, 0
	close(c.closedCh)
	return nil
}

// LocalAddr is the address the socket is bound to.
func (c *conn) LocalAddr() net.Addr { return net.UDPAddrFromAddrPort(c.local) }

// SetDeadline sets both deadlines.
func (c *conn) SetDeadline(t time.Time) error {
	_ = c.SetReadDeadline(t)
	return c.SetWriteDeadline(t)
}

// SetReadDeadline sets the read deadline and wakes a blocked read to
// take it.
func (c *conn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.opErr("set", nil, net.ErrClosed)
	}
	c.readDeadline = t
	close(c.deadlineCh)
	c.deadlineCh = make(chan struct{})
	return nil
}

// SetWriteDeadline sets the write deadline (a write never blocks, so it
// only makes writes after it fail).
func (c *conn) SetWriteDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return c.opErr("set", nil, net.ErrClosed)
	}
	c.writeDeadline = t
	return nil
}

// SetReadBuffer sets the receive queue's size, in payload bytes.
func (c *conn) SetReadBuffer(n int) error {
	if n <= 0 {
		return c.opErr("set", nil, fmt.Errorf("receive buffer of %d bytes: give a positive size", n))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.rcvbuf = n
	return nil
}

// SetWriteBuffer accepts any positive size and changes nothing: writes
// never wait, so there is no send buffer to size.
func (c *conn) SetWriteBuffer(n int) error {
	if n <= 0 {
		return c.opErr("set", nil, fmt.Errorf("send buffer of %d bytes: give a positive size", n))
	}
	return nil
}
