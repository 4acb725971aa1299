package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"time"
)

// A carrier carries channels opened one at a time, as a client's need for
// them arrives, rather than a session's fixed N at once: what a tunnel in
// front of a real application needs. ArmTCP opens a new TCP connection per
// channel, ArmQUIC a new stream on the one QUIC connection dialled with
// the carrier, ArmQUICPerChannel a new QUIC connection per channel. The
// settings, socket hooks, congestion control and State are a Session's;
// the header is in carrier_header.go.

// maxCarrierChannels is the most channels one carrier opens over its life.
const maxCarrierChannels = 1 << 16

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
	if n := len(opts.CarrierSecret); n > 0 && n < MinCarrierSecretLen {
		return opts, fmt.Errorf("transport: Options.CarrierSecret is %d bytes; give at least %d (random), or none", n, MinCarrierSecretLen)
	}
	if opts.CarrierLimit < 0 || opts.CarrierPeerLimit < 0 {
		return opts, fmt.Errorf("transport: Options.CarrierLimit %d and CarrierPeerLimit %d: use positive bounds, or 0 for the defaults (%d, %d)",
			opts.CarrierLimit, opts.CarrierPeerLimit, DefaultCarrierLimit, DefaultCarrierPeerLimit)
	}
	if opts.CarrierLimit == 0 {
		opts.CarrierLimit = DefaultCarrierLimit
	}
	if opts.CarrierPeerLimit == 0 {
		opts.CarrierPeerLimit = min(DefaultCarrierPeerLimit, opts.CarrierLimit)
	}
	return opts.validate(arm)
}

// CarrierChannel is a channel of a carrier: a Channel that also names the
// carrier it belongs to.
type CarrierChannel interface {
	Channel
	// Carrier is the carrier's id: random, chosen by its client, the same
	// at both ends. Channels of different carriers may share an index.
	Carrier() uint64
}

// Carrier is the client end of a carrier.
type Carrier struct {
	arm     Arm
	opts    Options
	addr    string
	started time.Time
	id      uint64
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
	c := &Carrier{arm: arm, opts: o, addr: addr, started: time.Now(), id: uint64(id)}
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

// ID is the carrier's id, which every channel's header carries (see
// CarrierChannel).
func (c *Carrier) ID() uint64 { return c.id }

var errCarrierClosed = fmt.Errorf("transport: carrier closed: %w", net.ErrClosed)

// Open opens the next channel and writes its header; ctx bounds the
// connect (and Options.HandshakeTimeout each handshake). The channel's
// Index is its place in the order of opening, 0 first.
func (c *Carrier) Open(ctx context.Context) (CarrierChannel, error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, errCarrierClosed
	}
	i := c.next
	if i >= maxCarrierChannels {
		c.mu.Unlock()
		return nil, fmt.Errorf("transport: a carrier opens at most %d channels", maxCarrierChannels)
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
		// The listener closes the connection some time after its channel
		// ended; its socket goes with it.
		context.AfterFunc(qc.conn.Context(), func() {
			for _, f := range closers {
				_ = f()
			}
		})
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

func (c *Carrier) openTCP(ctx context.Context, i int) (CarrierChannel, error) {
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
	hdr, err := carrierHeader(c.id, i, c.opts.CarrierSecret)
	if err == nil {
		err = writeWithin(ctx, conn, c.opts.HandshakeTimeout, hdr)
	}
	if err != nil {
		_ = conn.Close()
		return nil, chanErr(ArmTCP, "client", i, "header write", err)
	}
	c.mu.Lock()
	c.tcp = append(c.tcp, tc)
	c.mu.Unlock()
	last := sync.OnceFunc(func() { tc.keepLast(time.Since(c.started)) })
	return carrierTCPChannel{tcpChannel: tcpChannel{TCPConn: raw, index: i}, carrier: c.id, last: last}, nil
}

func (c *Carrier) openStream(ctx context.Context, qc *quicConn, i int) (CarrierChannel, error) {
	st, err := qc.conn.OpenStreamSync(ctx)
	if err != nil {
		return nil, chanErr(c.arm, "client", i, "open stream", err)
	}
	// The header is the stream's first data: what makes it exist for the
	// server.
	hdr, err := carrierHeader(c.id, i, c.opts.CarrierSecret)
	if err == nil {
		err = writeWithin(ctx, st, c.opts.HandshakeTimeout, hdr)
	}
	if err != nil {
		st.CancelWrite(0)
		return nil, chanErr(c.arm, "client", i, "header write", err)
	}
	if c.arm == ArmQUIC {
		c.mu.Lock()
		qc.channels = append(qc.channels, i)
		c.mu.Unlock()
	}
	return carrierQUICChannel{quicChannel: quicChannel{Stream: st, index: i}, carrier: c.id}, nil
}

// carrierTCPChannel and carrierQUICChannel are a carrier's channels; on
// the listener's side, release (run once, before the close) takes the
// channel out of what the listener holds.
type carrierTCPChannel struct {
	tcpChannel
	carrier uint64
	release func()
	last    func() // keeps the connection's last TCP_INFO
}

func (c carrierTCPChannel) Carrier() uint64 { return c.carrier }

func (c carrierTCPChannel) Close() error {
	if c.last != nil {
		c.last()
	}
	if c.release != nil {
		c.release()
	}
	return c.TCPConn.Close()
}

// carrierTCPConn is the TCP connection under a channel of an ArmTCP
// carrier, at either end, for an arm that frames channels of its own over
// it; ok is false for other channels. The channel's Close still ends it:
// at the listener's end, that is what releases the channel.
func carrierTCPConn(ch CarrierChannel) (c *net.TCPConn, ok bool) {
	tc, ok := ch.(carrierTCPChannel)
	if !ok {
		return nil, false
	}
	return tc.TCPConn, true
}

type carrierQUICChannel struct {
	quicChannel
	carrier uint64
	release func()
}

func (c carrierQUICChannel) Carrier() uint64 { return c.carrier }

func (c carrierQUICChannel) Close() error {
	if c.release != nil {
		c.release()
	}
	return c.quicChannel.Close()
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
	return carrierState(c.arm, "client", c.next, c.started, c.opts, c.hostCC, c.tcp, c.quic, nil, nil, 0)
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
	for _, tc := range c.tcp {
		tc.keepLast(time.Since(c.started))
	}
	c.mu.Unlock()
	var errs []error
	for _, f := range closers {
		if err := f(); err != nil && !isClosedErr(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// carrierState builds a State from a carrier end's live connections, and
// the states of those that ended (listed first) with the count of ended
// ones no longer listed.
func carrierState(arm Arm, role string, channels int, started time.Time, o Options, hostCC string,
	tcp []*tcpConn, qcs []*quicConn, endedTCP []TCPConnState, endedQUIC []QUICConnState, unlisted int) State {
	st := State{
		Arm:                        arm,
		Role:                       role,
		Channels:                   channels,
		Started:                    started,
		RequestedCongestionControl: o.CongestionControl,
		HostCongestionControl:      hostCC,
		UnlistedConnections:        unlisted,
	}
	if arm != ArmTCP {
		st.CongestionControl = QUICCongestionControl
		st.QUIC = append(st.QUIC, endedQUIC...)
		for _, c := range qcs {
			st.QUIC = append(st.QUIC, c.state())
		}
		return st
	}
	st.TCP = append(st.TCP, endedTCP...)
	for _, c := range tcp {
		st.TCP = append(st.TCP, c.state(time.Since(started)))
	}
	var algs []string
	for _, c := range st.TCP {
		if !slices.Contains(algs, c.Options.CongestionControl) {
			algs = append(algs, c.Options.CongestionControl)
		}
	}
	switch len(algs) {
	case 0:
	case 1:
		st.CongestionControl = algs[0]
	default:
		st.CongestionControl = fmt.Sprintf("mixed: %v", algs)
	}
	return st
}
