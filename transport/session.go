package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Channel is one of a session's channels: a reliable, ordered byte stream in
// both directions. Session.Channels returns them as io.ReadWriteCloser; each
// also implements Channel.
type Channel interface {
	io.ReadWriteCloser
	// Index is the channel's position in the session, 0..N-1, the same on
	// both ends.
	Index() int
	// CloseWrite ends the sending direction after the data already written
	// (TCP FIN, QUIC STREAM FIN); the peer reads io.EOF. Reading goes on.
	CloseWrite() error
	SetDeadline(time.Time) error
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
}

// ChannelError says which arm, end, channel and step failed.
type ChannelError struct {
	Arm  Arm
	Role string // "server" or "client"
	// Channel is the channel index, or -1 when the step concerns the whole
	// session or connection.
	Channel int
	Step    string
	Err     error
}

func (e *ChannelError) Error() string {
	if e.Channel < 0 {
		return fmt.Sprintf("transport: %s %s: %s: %v", e.Arm, e.Role, e.Step, e.Err)
	}
	return fmt.Sprintf("transport: %s %s: channel %d: %s: %v", e.Arm, e.Role, e.Channel, e.Step, e.Err)
}

func (e *ChannelError) Unwrap() error { return e.Err }

func chanErr(arm Arm, role string, ch int, step string, err error) error {
	return &ChannelError{Arm: arm, Role: role, Channel: ch, Step: step, Err: err}
}

// State is what was in force for one end of a session, read from the sockets
// and the QUIC connections. It is meant to be written out as JSON beside a
// run's results. Durations are nanoseconds in JSON.
type State struct {
	Arm      Arm    `json:"arm"`
	Role     string `json:"role"`
	Channels int    `json:"channels"`
	// Started is when the session began (client: the first dial; server:
	// when its first channel arrived).
	Started time.Time `json:"started"`
	// ConnectTime is, on the client, the time from the first dial until
	// every channel was usable (connected or handshaken, and its header
	// written). Zero on the server.
	ConnectTime time.Duration `json:"connect_time_ns"`
	// CongestionControl names the controller in force: for tcp the
	// algorithm read back from every socket (or "mixed: ..." if they
	// differ), for the QUIC arms QUICCongestionControl.
	CongestionControl string `json:"congestion_control"`
	// RequestedCongestionControl is Options.CongestionControl ("" = host
	// default) and HostCongestionControl the host default at setup.
	RequestedCongestionControl string `json:"requested_congestion_control"`
	HostCongestionControl      string `json:"host_congestion_control,omitempty"`
	// Priority describes the stream priority applied, if any.
	Priority *PriorityState  `json:"priority,omitempty"`
	TCP      []TCPConnState  `json:"tcp,omitempty"`
	QUIC     []QUICConnState `json:"quic,omitempty"`
}

// PriorityState records a SetPriority applied to one channel's stream.
type PriorityState struct {
	Channel     int  `json:"channel"`
	Urgency     int  `json:"urgency"`
	Incremental bool `json:"incremental"`
	// OthersUrgency is the urgency every other stream keeps.
	OthersUrgency int `json:"others_urgency"`
}

// TCPConnState is one tcp-arm connection.
type TCPConnState struct {
	Channel    int    `json:"channel"`
	LocalAddr  string `json:"local_addr"`
	RemoteAddr string `json:"remote_addr"`
	// Options are the socket options read back right after setup.
	Options TCPSocketOptions `json:"options"`
	// Info is TCP_INFO taken when State was called.
	Info TCPInfo `json:"info"`
	// InfoError is set if Info could not be read (e.g. socket closed).
	InfoError string `json:"info_error,omitempty"`
	// Series holds the periodic samples when Options.TCPInfoInterval > 0.
	Series        []TCPInfo `json:"series,omitempty"`
	SeriesDropped int       `json:"series_dropped,omitempty"`
}

// QUICStats is quic-go's ConnectionStats for one connection.
type QUICStats struct {
	MinRTT           time.Duration `json:"min_rtt_ns"`
	LatestRTT        time.Duration `json:"latest_rtt_ns"`
	SmoothedRTT      time.Duration `json:"srtt_ns"`
	MeanDeviation    time.Duration `json:"rttvar_ns"`
	CongestionWindow uint64        `json:"cwnd_bytes"`
	BytesSent        uint64        `json:"bytes_sent"`
	PacketsSent      uint64        `json:"packets_sent"`
	BytesReceived    uint64        `json:"bytes_received"`
	PacketsReceived  uint64        `json:"packets_received"`
	BytesLost        uint64        `json:"bytes_lost"`
	PacketsLost      uint64        `json:"packets_lost"`
}

// QUICConnState is one QUIC connection of a QUIC arm.
type QUICConnState struct {
	// Channels lists the channels this connection carries.
	Channels          []int  `json:"channels"`
	LocalAddr         string `json:"local_addr"`
	RemoteAddr        string `json:"remote_addr"`
	CongestionControl string `json:"congestion_control"`
	// GSO is quic-go's ConnectionState().GSO: whether it sends with UDP
	// segmentation offload.
	GSO         bool   `json:"gso"`
	QUICVersion string `json:"quic_version"`
	TLSVersion  string `json:"tls_version"`
	ALPN        string `json:"alpn"`
	// ECNState is quic-go's ECN validation state for its sending path
	// (testing, unknown, failed, capable), from qlog; empty if never
	// logged. "capable" shows ECN marks made the round trip, which needs
	// ECN reception on the peer's socket.
	ECNState string `json:"ecn_state,omitempty"`
	// Socket is the UDP socket as read back from the kernel.
	Socket UDPSocketState `json:"socket"`
	// ConfiguredPacketSize is quic.Config.InitialPacketSize with path MTU
	// discovery off; MaxShortHeaderPacket is the largest 1-RTT packet the
	// connection actually sent (from qlog), ShortHeaderPackets how many
	// were sent and OversizePackets how many exceeded DatagramSize.
	ConfiguredPacketSize int   `json:"configured_packet_size"`
	PathMTUDiscovery     bool  `json:"path_mtu_discovery"`
	MaxShortHeaderPacket int   `json:"max_short_header_packet"`
	ShortHeaderPackets   int64 `json:"short_header_packets"`
	OversizePackets      int64 `json:"oversize_packets"`
	// LocalParameters and PeerParameters are the transport parameters
	// each side announced (initial flow-control windows among them).
	LocalParameters *TransportParameters `json:"local_parameters,omitempty"`
	PeerParameters  *TransportParameters `json:"peer_parameters,omitempty"`
	// MaxConnectionReceiveWindow and MaxStreamReceiveWindow are the
	// auto-tuning ceilings given to quic-go (configuration: quic-go does
	// not report them).
	MaxConnectionReceiveWindow uint64    `json:"max_connection_receive_window"`
	MaxStreamReceiveWindow     uint64    `json:"max_stream_receive_window"`
	Stats                      QUICStats `json:"stats"`
	// Metrics is the congestion window and bytes in flight over time,
	// at most one sample per Options.MetricsInterval.
	Metrics          []QUICMetric          `json:"metrics,omitempty"`
	MetricsDropped   int                   `json:"metrics_dropped,omitempty"`
	Losses           []QUICLoss            `json:"losses,omitempty"`
	LossesDropped    int                   `json:"losses_dropped,omitempty"`
	CongestionStates []QUICCongestionState `json:"congestion_states,omitempty"`
	QlogFile         string                `json:"qlog_file,omitempty"`
	QlogError        string                `json:"qlog_error,omitempty"`
}

// Session is one end of N channels between a client and a server.
type Session struct {
	arm         Arm
	role        string
	opts        Options
	started     time.Time
	connectTime time.Duration
	hostCC      string
	channels    []Channel
	tcp         []*tcpConn
	quic        []*quicConn
	priority    *PriorityState
	closers     []func() error

	stopSampling context.CancelFunc
	samplingDone chan struct{}
	closeOnce    sync.Once
	closeErr     error
}

// Arm returns the session's arm: ArmQUICPriority for a QUIC session with
// Options.Priority set, however it was asked for, since that is what the
// arm is.
func (s *Session) Arm() Arm {
	if s.arm == ArmQUIC && s.opts.Priority {
		return ArmQUICPriority
	}
	return s.arm
}

// Channels returns the channels in index order; each is also a Channel.
func (s *Session) Channels() []io.ReadWriteCloser {
	out := make([]io.ReadWriteCloser, len(s.channels))
	for i, c := range s.channels {
		out[i] = c
	}
	return out
}

// Channel returns channel i.
func (s *Session) Channel(i int) Channel { return s.channels[i] }

// ConnectTime is the client's time from the first dial until all channels
// were usable; zero on the server.
func (s *Session) ConnectTime() time.Duration { return s.connectTime }

// State reads what is in force now: socket options and TCP_INFO for tcp,
// ConnectionState, ConnectionStats and the qlog-derived series for QUIC.
// Call it before Close for live figures; after Close it still returns the
// QUIC series and stats, but TCP_INFO can no longer be read.
func (s *Session) State() State {
	st := State{
		Arm:                        s.Arm(),
		Role:                       s.role,
		Channels:                   len(s.channels),
		Started:                    s.started,
		ConnectTime:                s.connectTime,
		RequestedCongestionControl: s.opts.CongestionControl,
		HostCongestionControl:      s.hostCC,
		Priority:                   s.priority,
	}
	if s.arm == ArmTCP {
		seen := map[string]bool{}
		var algs []string
		for _, c := range s.tcp {
			cs := c.state(time.Since(s.started))
			st.TCP = append(st.TCP, cs)
			if !seen[cs.Options.CongestionControl] {
				seen[cs.Options.CongestionControl] = true
				algs = append(algs, cs.Options.CongestionControl)
			}
		}
		switch len(algs) {
		case 1:
			st.CongestionControl = algs[0]
		default:
			st.CongestionControl = fmt.Sprintf("mixed: %v", algs)
		}
		return st
	}
	st.CongestionControl = QUICCongestionControl
	for _, c := range s.quic {
		st.QUIC = append(st.QUIC, c.state())
	}
	return st
}

// Close closes every channel and connection of the session. QUIC
// connections are closed immediately (CONNECTION_CLOSE), so wait for the
// peer to have read what it needs first.
func (s *Session) Close() error {
	s.closeOnce.Do(func() {
		if s.stopSampling != nil {
			s.stopSampling()
			<-s.samplingDone
		}
		var errs []error
		for _, c := range s.channels {
			if err := c.Close(); err != nil && !isClosedErr(err) {
				errs = append(errs, err)
			}
		}
		for _, f := range s.closers {
			if err := f(); err != nil && !isClosedErr(err) {
				errs = append(errs, err)
			}
		}
		s.closeErr = errors.Join(errs...)
	})
	return s.closeErr
}

func isClosedErr(err error) bool {
	return errors.Is(err, net.ErrClosed)
}

// Listener accepts sessions for one arm.
type Listener struct {
	arm     Arm
	opts    Options
	addr    net.Addr
	results chan acceptResult
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	closers []func() error
	shared  *refCloser // QUIC: the transport shared by the listener and its sessions

	mu    sync.Mutex
	fatal error

	closeOnce sync.Once
	closeErr  error
}

type acceptResult struct {
	s   *Session
	err error
}

// Listen starts accepting sessions of the given arm on addr ("ip:port"; port
// 0 picks one, see Addr). The listener stops when Close is called or ctx is
// done. For the QUIC arms opts.Certificate must hold the certificate and key.
func Listen(ctx context.Context, arm Arm, addr string, opts Options) (*Listener, error) {
	arm, opts = arm.connections(opts)
	o, err := opts.validate(arm)
	if err != nil {
		return nil, err
	}
	lctx, cancel := context.WithCancel(ctx)
	l := &Listener{arm: arm, opts: o, results: make(chan acceptResult, 16), ctx: lctx, cancel: cancel}
	switch arm {
	case ArmTCP:
		err = l.listenTCP(addr)
	default:
		err = l.listenQUIC(addr)
	}
	if err != nil {
		cancel()
		_ = l.closeAll()
		return nil, err
	}
	go func() {
		<-lctx.Done()
		_ = l.Close()
	}()
	return l, nil
}

// Addr is the address the listener is bound to.
func (l *Listener) Addr() net.Addr { return l.addr }

// Accept waits for the next complete session: all N channels arrived and
// identified. A *ChannelError about one incoming session (bad header,
// missing channels, failed handshake step) leaves the listener running:
// call Accept again. If the listening socket itself fails, the listener
// closes and Accept returns that error, wrapping net.ErrClosed. After Close,
// or once the listener's context has ended, Accept returns net.ErrClosed.
func (l *Listener) Accept(ctx context.Context) (*Session, error) {
	if l.ctx.Err() != nil {
		return nil, l.closedErr()
	}
	select {
	case r := <-l.results:
		return r.s, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-l.ctx.Done():
		return nil, l.closedErr()
	}
}

// fail stops the listener because its socket failed; Accept reports err.
func (l *Listener) fail(err error) {
	l.mu.Lock()
	if l.fatal == nil {
		l.fatal = err
	}
	l.mu.Unlock()
	l.cancel()
}

func (l *Listener) closedErr() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fatal != nil {
		return fmt.Errorf("%w (%w)", l.fatal, net.ErrClosed)
	}
	return fmt.Errorf("transport: %s listener: %w", l.arm, net.ErrClosed)
}

func (l *Listener) deliver(s *Session, err error) {
	if l.ctx.Err() == nil {
		select {
		case l.results <- acceptResult{s, err}:
			return
		case <-l.ctx.Done():
		}
	}
	if s != nil {
		_ = s.Close()
	}
}

// Close stops accepting. Sessions already returned by Accept stay open;
// sessions not yet accepted are closed.
func (l *Listener) Close() error {
	l.closeOnce.Do(func() {
		l.cancel()
		l.closeErr = l.closeAll()
		l.wg.Wait()
		for {
			select {
			case r := <-l.results:
				if r.s != nil {
					_ = r.s.Close()
				}
				continue
			default:
			}
			break
		}
	})
	return l.closeErr
}

func (l *Listener) closeAll() error {
	var errs []error
	for _, f := range l.closers {
		if err := f(); err != nil && !isClosedErr(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Dial opens a session of opts.Channels channels to a Listener of the same
// arm at addr. All channels are dialled concurrently; ctx bounds the whole
// setup (and opts.HandshakeTimeout each connection).
func Dial(ctx context.Context, arm Arm, addr string, opts Options) (*Session, error) {
	arm, opts = arm.connections(opts)
	o, err := opts.validate(arm)
	if err != nil {
		return nil, err
	}
	switch arm {
	case ArmTCP:
		return dialTCP(ctx, addr, o)
	default:
		return dialQUIC(ctx, arm, addr, o)
	}
}

// pending collects the channels of one incoming session on the server until
// all have arrived, or its deadline passes.
type pending[T any] struct {
	items   []T
	have    []bool
	n       int
	started time.Time
	timer   *time.Timer
}

type grouper[T any] struct {
	mu       sync.Mutex
	sessions map[sessionID]*pending[T]
}

// add files item as channel h.index of session h.session. It returns the
// complete set when this item was the last one missing. onExpire runs (once)
// with the items collected so far if the session is still incomplete after
// timeout.
func (g *grouper[T]) add(h channelHeader, item T, timeout time.Duration, onExpire func(have []T, missing []int)) (complete []T, started time.Time, err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.sessions == nil {
		g.sessions = map[sessionID]*pending[T]{}
	}
	p, ok := g.sessions[h.session]
	if !ok {
		p = &pending[T]{items: make([]T, h.count), have: make([]bool, h.count), started: time.Now()}
		g.sessions[h.session] = p
		id := h.session
		p.timer = time.AfterFunc(timeout, func() {
			g.mu.Lock()
			q, ok := g.sessions[id]
			if ok {
				delete(g.sessions, id)
			}
			g.mu.Unlock()
			if !ok {
				return
			}
			var have []T
			var missing []int
			for i, got := range q.have {
				if got {
					have = append(have, q.items[i])
				} else {
					missing = append(missing, i)
				}
			}
			onExpire(have, missing)
		})
	}
	if len(p.items) != h.count {
		return nil, time.Time{}, fmt.Errorf("header says %d channels but earlier channels of session %016x said %d", h.count, uint64(h.session), len(p.items))
	}
	if p.have[h.index] {
		return nil, time.Time{}, fmt.Errorf("channel %d of session %016x arrived twice", h.index, uint64(h.session))
	}
	p.items[h.index] = item
	p.have[h.index] = true
	p.n++
	if p.n < h.count {
		return nil, time.Time{}, nil
	}
	p.timer.Stop()
	delete(g.sessions, h.session)
	return p.items, p.started, nil
}
