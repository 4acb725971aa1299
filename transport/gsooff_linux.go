package transport

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"

	"golang.org/x/net/ipv4"
	"golang.org/x/sys/unix"

	"github.com/quic-go/quic-go"
)

// gsoOffConn is a UDP socket that quic-go uses without GSO. It keeps the
// OOB path (ECN, batched receive), but hands quic-go, through SyscallConn,
// the control handle of a stand-in TCP socket, where
// getsockopt(UDP_SEGMENT) fails, so quic-go sends one packet per write; it
// applies quic-go's options to the real socket itself, and refuses a
// write that carries UDP_SEGMENT anyway. docs/transport.md has how quic-go
// decides.
type gsoOffConn struct {
	udpSocket
	batch   *ipv4.PacketConn
	standIn *os.File
	control syscall.RawConn
}

// The wrapper must stay on quic-go's OOB path and provide batched reads.
var (
	_ quic.OOBCapablePacketConn = (*gsoOffConn)(nil)
	_ interface {
		ReadBatch([]ipv4.Message, int) (int, error)
	} = (*gsoOffConn)(nil)
)

var errGSOLeak = errors.New("transport: a write with a UDP_SEGMENT control message reached the GSO-off wrapper; " +
	"refusing to send it (quic-go enabled GSO despite the wrapper)")

// quicGoBufferSize is the socket buffer size quic-go asks for (7 MiB).
const quicGoBufferSize = 7 << 20

func newGSOOffConn(s udpSocket) (*gsoOffConn, error) {
	rc, err := s.SyscallConn()
	if err != nil {
		return nil, fmt.Errorf("gso-off wrapper: raw socket: %w", err)
	}
	var family int
	var serr error
	if err := rc.Control(func(fd uintptr) {
		family, serr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_DOMAIN)
	}); err != nil {
		return nil, fmt.Errorf("gso-off wrapper: %w", err)
	}
	if serr != nil {
		return nil, fmt.Errorf("gso-off wrapper: reading socket family: %w", serr)
	}
	if err := prepareUDPSocket(s, rc); err != nil {
		return nil, fmt.Errorf("gso-off wrapper: %w", err)
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, unix.IPPROTO_TCP)
	if err != nil {
		return nil, fmt.Errorf("gso-off wrapper: creating the stand-in control socket: %w", err)
	}
	f := os.NewFile(uintptr(fd), "quicbench-gso-off-control")
	ctl, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("gso-off wrapper: stand-in control socket: %w", err)
	}
	// Make sure the stand-in really hides GSO: if a future kernel accepted
	// UDP_SEGMENT on a TCP socket, the wrapper would silently stop working.
	var probeErr error
	if err := ctl.Control(func(fd uintptr) {
		_, probeErr = unix.GetsockoptInt(int(fd), unix.IPPROTO_UDP, unix.UDP_SEGMENT)
	}); err != nil || probeErr == nil {
		_ = f.Close()
		return nil, errors.New("gso-off wrapper: the stand-in socket answers the UDP_SEGMENT probe, so it cannot hide GSO from quic-go on this kernel")
	}
	return &gsoOffConn{udpSocket: s, batch: ipv4.NewPacketConn(s), standIn: f, control: ctl}, nil
}

// prepareUDPSocket applies to the real socket what quic-go would have set
// through SyscallConn: ECN and packet-info reception, the DF bit, and 7 MiB
// buffers (forced when root).
func prepareUDPSocket(s udpSocket, rc syscall.RawConn) error {
	unspecified := false
	if a, ok := s.LocalAddr().(*net.UDPAddr); ok && a.IP.IsUnspecified() {
		unspecified = true
	}
	var e4, e6, p4, p6, d4, d6 error
	if err := rc.Control(func(fd uintptr) {
		e4 = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVTOS, 1)
		e6 = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_RECVTCLASS, 1)
		if unspecified {
			p4 = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_PKTINFO, 1)
			p6 = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_RECVPKTINFO, 1)
		}
		d4 = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_MTU_DISCOVER, unix.IP_PMTUDISC_PROBE)
		d6 = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_MTU_DISCOVER, unix.IPV6_PMTUDISC_PROBE)
	}); err != nil {
		return err
	}
	if e4 != nil && e6 != nil {
		return fmt.Errorf("enabling ECN reception failed for IPv4 (%v) and IPv6 (%v)", e4, e6)
	}
	if unspecified && p4 != nil && p6 != nil {
		return fmt.Errorf("enabling packet info failed for IPv4 (%v) and IPv6 (%v)", p4, p6)
	}
	if d4 != nil && d6 != nil {
		return fmt.Errorf("setting DF failed for IPv4 (%v) and IPv6 (%v)", d4, d6)
	}
	_ = s.SetReadBuffer(quicGoBufferSize)
	_ = s.SetWriteBuffer(quicGoBufferSize)
	return rc.Control(func(fd uintptr) {
		if v, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF); err == nil && v < quicGoBufferSize {
			_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, quicGoBufferSize)
		}
		if v, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF); err == nil && v < quicGoBufferSize {
			_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, quicGoBufferSize)
		}
	})
}

// SyscallConn gives quic-go the stand-in's control handle (see above).
func (c *gsoOffConn) SyscallConn() (syscall.RawConn, error) { return c.control, nil }

// ReadBatch reads up to len(ms) datagrams from the real socket in one
// recvmmsg, keeping quic-go's batched receive.
func (c *gsoOffConn) ReadBatch(ms []ipv4.Message, flags int) (int, error) {
	return c.batch.ReadBatch(ms, flags)
}

// WriteMsgUDP sends one datagram, refusing any segmentation request.
func (c *gsoOffConn) WriteMsgUDP(b, oob []byte, addr *net.UDPAddr) (int, int, error) {
	if hasUDPSegment(oob) {
		return 0, 0, errGSOLeak
	}
	return c.udpSocket.WriteMsgUDP(b, oob, addr)
}

// SetReadBuffer sizes the real socket; the stand-in mirrors it so that
// quic-go's read-back check sees what it asked for.
func (c *gsoOffConn) SetReadBuffer(n int) error {
	err := c.udpSocket.SetReadBuffer(n)
	_ = c.control.Control(func(fd uintptr) { _ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF, n) })
	return err
}

// SetWriteBuffer: as SetReadBuffer, for the send buffer.
func (c *gsoOffConn) SetWriteBuffer(n int) error {
	err := c.udpSocket.SetWriteBuffer(n)
	_ = c.control.Control(func(fd uintptr) { _ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF, n) })
	return err
}

// Close closes the UDP socket and the stand-in.
func (c *gsoOffConn) Close() error {
	err := c.udpSocket.Close()
	if cerr := c.standIn.Close(); err == nil {
		err = cerr
	}
	return err
}

// hasUDPSegment reports whether a control-message buffer carries a
// UDP_SEGMENT (GSO) message.
func hasUDPSegment(oob []byte) bool {
	for len(oob) > 0 {
		h, _, rest, err := unix.ParseOneSocketControlMessage(oob)
		if err != nil {
			// Unparseable: treat as suspicious rather than let it through.
			return true
		}
		if h.Level == unix.IPPROTO_UDP && h.Type == unix.UDP_SEGMENT {
			return true
		}
		oob = rest
	}
	return false
}

func readUDPSocketState(s udpSocket, wrapped bool) UDPSocketState {
	st := UDPSocketState{GSOWrapper: wrapped, MTUDiscover: -1}
	rc, err := s.SyscallConn()
	if err != nil {
		return st
	}
	_ = rc.Control(func(fd uintptr) {
		v, err := unix.GetsockoptInt(int(fd), unix.IPPROTO_UDP, unix.UDP_SEGMENT)
		st.KernelGSO = err == nil
		st.UDPSegment = v
		st.ReceiveBuffer, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF)
		st.SendBuffer, _ = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_SNDBUF)
		if v, err := unix.GetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVTOS); err == nil && v != 0 {
			st.ECNReceive = true
		} else if v, err := unix.GetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_RECVTCLASS); err == nil && v != 0 {
			st.ECNReceive = true
		}
		if v, err := unix.GetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_MTU_DISCOVER); err == nil {
			st.MTUDiscover = v
		}
	})
	return st
}

// withoutGSO is WithoutGSO's wrapping.
func withoutGSO(uc *net.UDPConn) (net.PacketConn, error) {
	w, err := newGSOOffConn(uc)
	if err != nil {
		return nil, fmt.Errorf("transport: WithoutGSO: %w", err)
	}
	return w, nil
}
