package transport

import (
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// A carrier carries channels that are opened one at a time, as a client's
// need for them arrives, rather than a session's fixed N at once: what a
// tunnel in front of a real application needs (a SPICE client opens its
// main channel, and the others only after the main channel's init). The
// arms carry them as a Session does:
//
//   - ArmTCP: a new TCP connection per channel, with the same socket
//     options (TCP_NODELAY, the pinned congestion control, read back).
//   - ArmQUIC: one QUIC connection, dialled when the carrier is, with a
//     new bidirectional stream per channel.
//   - ArmQUICPerChannel: a new QUIC connection (its own UDP socket and
//     handshake) per channel, with one stream.
//
// Every channel starts with a carrier header, written by the client before
// anything else and read by the server, which hands the channel over with
// nothing of it consumed but the header:
//
//	offset size field
//	0      4    magic "QBD1"
//	4      8    carrier id (random, chosen by the client)
//	12     2    channel index, in the order the client opened them
//
// The QUIC settings, the GSO-off wrapper, the certificate, the socket
// hooks (Options.Listen, ListenPacket, DialContext), the congestion-control
// pinning and State are the same as a Session's.
const carrierHeaderLen = 14

var carrierMagic = [4]byte{'Q', 'B', 'D', '1'}

// MaxCarrierChannels is the most channels one carrier opens over its life.
const MaxCarrierChannels = 1 << 16

func carrierHeader(id sessionID, index int) []byte {
	b := make([]byte, carrierHeaderLen)
	copy(b, carrierMagic[:])
	binary.BigEndian.PutUint64(b[4:], uint64(id))
	binary.BigEndian.PutUint16(b[12:], uint16(index))
	return b
}

func readCarrierHeader(r io.Reader) (sessionID, int, error) {
	var b [carrierHeaderLen]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, -1, fmt.Errorf("reading the carrier header: %w", err)
	}
	if [4]byte(b[:4]) != carrierMagic {
		return 0, -1, fmt.Errorf("carrier header has magic %q, want %q: the peer is not a quicbench carrier of this version "+
			"(a fixed-size session's client talks to Listen, not ListenCarrier)", b[:4], carrierMagic[:])
	}
	return sessionID(binary.BigEndian.Uint64(b[4:12])), int(binary.BigEndian.Uint16(b[12:])), nil
}

// carrierOptions validates opts for a carrier of arm: Channels, unset,
// means MaxChannels open at once (it sizes QUIC's stream limit); stream
// priority has no channel to name when channels arrive over time.
func carrierOptions(arm Arm, opts Options) (Options, error) {
	if arm == ArmQUICPriority || opts.Priority {
		return opts, fmt.Errorf("transport: a carrier opens channels as they come, so there is no channel to prioritise: use %q, %q or %q",
			ArmTCP, ArmQUIC, ArmQUICPerChannel)
	}
	if opts.Channels == 0 {
		opts.Channels = MaxChannels
	}
	return opts.validate(arm)
}

// Carrier is the client end of a carrier.
type Carrier struct {
	arm     Arm
	opts    Options
	addr    string
	started time.Time
	id      sessionID
	hostCC  string

	tlsConf *tls.Config
	raddr   *net.UDPAddr
	network string
	dialTCP func(ctx context.Context, network, address string) (net.Conn, error)

	mu      sync.Mutex
	next    int
	tcp     []*tcpConn
	quic    []*quicConn
	shared  *quicConn // ArmQUIC: the one connection
	closers []func() error
	closed  bool
}

// DialCarrier prepares the client end of a carrier of arm to a
// ListenCarrier at addr. For ArmQUIC it dials the connection now, so the
// first Open costs no handshake; the other arms connect per channel in
// Open. Options.Channels bounds the channels open at once (0 means
// MaxChannels); ArmQUICPriority is refused.
func DialCarrier(ctx context.Context, arm Arm, addr string, opts Options) (*Carrier, error) {
	o, err := carrierOptions(arm, opts)
	if err != nil {
		return nil, err
	}
	id, err := newSessionID()
	if err != nil {
		return nil, err
	}
	c := &Carrier{arm: arm, opts: o, addr: addr, started: time.Now(), id: id}
	if arm == ArmTCP {
		return c, c.prepareTCP()
	}
	if c.tlsConf, err = o.Certificate.clientTLS(); err != nil {
		return nil, err
	}
	if c.raddr, err = net.ResolveUDPAddr("udp", addr); err != nil {
		return nil, chanErr(arm, "client", -1, "resolve", err)
	}
	c.network = "udp4"
	if c.raddr.IP.To4() == nil {
		c.network = "udp6"
	}
	if arm == ArmQUIC {
		qc, closers, err := c.dialQUIC(ctx, -1)
		c.closers = closers
		if err != nil {
			_ = c.Close()
			return nil, err
		}
		c.shared = qc
		c.quic = []*quicConn{qc}
	}
	return c, nil
}

func (c *Carrier) prepareTCP() error {
	o := c.opts
	if o.CongestionControl != "" {
		if err := CheckCongestionControl(o.CongestionControl); err != nil {
			return err
		}
	}
	var err error
	if c.hostCC, err = HostCongestionControl(); err != nil {
		return err
	}
	d := net.Dialer{Timeout: o.HandshakeTimeout, ControlContext: tcpControl(o)}
	c.dialTCP = d.DialContext
	if o.DialContext != nil {
		c.dialTCP = func(ctx context.Context, network, address string) (net.Conn, error) {
			ctx, cancel := context.WithTimeout(ctx, o.HandshakeTimeout)
			defer cancel()
			return o.DialContext(ctx, network, address)
		}
	}
	return nil
}

func (c *Carrier) dialQUIC(ctx context.Context, ch int) (*quicConn, []func() error, error) {
	ep, err := newUDPEndpoint(ctx, c.network, "", c.opts)
	if err != nil {
		return nil, nil, chanErr(c.arm, "client", ch, "UDP socket", err)
	}
	return dialQUICConn(ctx, c.arm, ch, ep, c.raddr, c.tlsConf, c.opts, c.started)
}

// Arm is the carrier's arm.
func (c *Carrier) Arm() Arm { return c.arm }

var errCarrierClosed = fmt.Errorf("transport: carrier closed: %w", net.ErrClosed)

// Open opens the next channel and writes its header; ctx bounds the
// connect (and Options.HandshakeTimeout each handshake). The channel's
// Index is its place in the order of opening, 0 first.
func (c *Carrier) Open(ctx context.Context) (Channel, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, errCarrierClosed
	}
	i := c.next
	if i >= MaxCarrierChannels {
		c.mu.Unlock()
		return nil, fmt.Errorf("transport: a carrier opens at most %d channels", MaxCarrierChannels)
	}
	c.next++
	c.mu.Unlock()
	switch c.arm {
	case ArmTCP:
		return c.openTCP(ctx, i)
	case ArmQUIC:
		return c.openStream(ctx, c.shared, i)
	default:
		qc, closers, err := c.dialQUIC(ctx, i)
		if !c.keep(closers) {
			return nil, errCarrierClosed
		}
		if err != nil {
			return nil, err
		}
		qc.channels = []int{i}
		c.mu.Lock()
		c.quic = append(c.quic, qc)
		c.mu.Unlock()
		return c.openStream(ctx, qc, i)
	}
}

// keep adds closers to those Close runs, or runs them now if the carrier
// was closed meanwhile (then it reports false).
func (c *Carrier) keep(closers []func() error) bool {
	c.mu.Lock()
	if !c.closed {
		c.closers = append(c.closers, closers...)
		c.mu.Unlock()
		return true
	}
	c.mu.Unlock()
	for _, f := range closers {
		_ = f()
	}
	return false
}

func (c *Carrier) openTCP(ctx context.Context, i int) (Channel, error) {
	conn, err := c.dialTCP(ctx, "tcp", c.addr)
	if err != nil {
		return nil, chanErr(ArmTCP, "client", i, "dial", err)
	}
	raw, ok := conn.(*net.TCPConn)
	if !ok {
		_ = conn.Close()
		return nil, chanErr(ArmTCP, "client", i, "dial", fmt.Errorf("Options.DialContext returned a %T; it must return a *net.TCPConn", conn))
	}
	if !c.keep([]func() error{conn.Close}) {
		return nil, errCarrierClosed
	}
	tc, err := setupTCP(raw, i, c.opts)
	if err != nil {
		_ = conn.Close()
		return nil, chanErr(ArmTCP, "client", i, "socket options", err)
	}
	if err := writeWithin(ctx, conn, c.opts.HandshakeTimeout, carrierHeader(c.id, i)); err != nil {
		_ = conn.Close()
		return nil, chanErr(ArmTCP, "client", i, "header write", err)
	}
	c.mu.Lock()
	c.tcp = append(c.tcp, tc)
	c.mu.Unlock()
	return tcpChannel{TCPConn: raw, index: i}, nil
}

func (c *Carrier) openStream(ctx context.Context, qc *quicConn, i int) (Channel, error) {
	st, err := qc.conn.OpenStreamSync(ctx)
	if err != nil {
		return nil, chanErr(c.arm, "client", i, "open stream", err)
	}
	// The header is the stream's first data: what makes it exist for the
	// server.
	if err := writeWithin(ctx, st, c.opts.HandshakeTimeout, carrierHeader(c.id, i)); err != nil {
		st.CancelWrite(0)
		return nil, chanErr(c.arm, "client", i, "header write", err)
	}
	if c.arm == ArmQUIC {
		c.mu.Lock()
		qc.channels = append(qc.channels, i)
		c.mu.Unlock()
	}
	return quicChannel{Stream: st, index: i}, nil
}

type writeDeadliner interface {
	io.Writer
	SetWriteDeadline(time.Time) error
}

// writeWithin writes b with a deadline of timeout or ctx's, whichever is
// sooner, and clears the deadline afterwards.
func writeWithin(ctx context.Context, w writeDeadliner, timeout time.Duration, b []byte) error {
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = w.SetWriteDeadline(deadline)
	_, err := w.Write(b)
	_ = w.SetWriteDeadline(time.Time{})
	return err
}

// State reads what is in force now on every connection the carrier has
// opened, as Session.State does. Channels is the number opened so far.
func (c *Carrier) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return carrierState(c.arm, "client", c.next, c.started, c.opts, c.hostCC, c.tcp, c.quic)
}

// Close closes every connection the carrier opened, and with them every
// channel. QUIC connections close immediately (CONNECTION_CLOSE): close
// the channels' write sides first and let the peer read what it needs.
func (c *Carrier) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	closers := c.closers
	c.mu.Unlock()
	var errs []error
	for _, f := range closers {
		if err := f(); err != nil && !isClosedErr(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// carrierState builds a State from a carrier end's connections.
func carrierState(arm Arm, role string, channels int, started time.Time, o Options, hostCC string,
	tcp []*tcpConn, qcs []*quicConn) State {
	s := Session{arm: arm, role: role, opts: o, started: started, hostCC: hostCC, tcp: tcp, quic: qcs}
	st := s.State()
	st.Channels = channels
	return st
}
