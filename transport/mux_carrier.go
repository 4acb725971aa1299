package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sync"
	"time"
)

// muxCarrierChannels is how many channels a tcp-mux carrier opens over its
// life.
const muxCarrierChannels = MaxChannels

// A tcp-mux carrier carries channels opened one at a time, as a tunnel in
// front of a real application needs them (see DialCarrier),
// over one TCP connection framed as the tcp-mux arm's sessions are. The
// connection is the one channel of an ArmTCP carrier: its header, the
// proof of Options.CarrierSecret, the listener's bounds, the socket
// options and the pinned congestion control are the transport package's.
// Over it the client writes a hello in carrier mode, then opens each
// channel with an open frame before any of its bytes.

// MuxCarrier is the client end of a tcp-mux carrier.
type MuxCarrier struct {
	tc *Carrier
	s  *MuxSession
	id uint64

	openMu sync.Mutex // one Open at a time
	mu     sync.Mutex // guards next
	next   int        // the next channel's index
}

// DialMuxCarrier connects a tcp-mux carrier to a ListenMuxCarrier at addr.
// Options are the tcp arm's, with CarrierSecret (Channels is 0: a carrier
// opens up to MaxChannels); the connection is made now, so that
// Open costs no round trip.
func DialMuxCarrier(ctx context.Context, addr string, o Options) (*MuxCarrier, error) {
	o, hostCC, err := muxCarrierOptions(o)
	if err != nil {
		return nil, err
	}
	started := time.Now()
	tc, err := DialCarrier(ctx, ArmTCP, addr, o)
	if err != nil {
		return nil, fmt.Errorf("tcp-mux carrier: %w", err)
	}
	ch, err := tc.Open(ctx)
	if err != nil {
		_ = tc.Close()
		return nil, fmt.Errorf("tcp-mux carrier: %w", err)
	}
	conn, _ := carrierTCPConn(ch)
	s, err := newMuxSession(conn, "client", o, started, hostCC)
	if err == nil {
		_ = conn.SetWriteDeadline(time.Now().Add(handshakeTimeout(o)))
		if _, err = conn.Write(muxHello(muxCarrierChannels, muxModeCarrier)); err != nil {
			err = fmt.Errorf("writing the hello: %w", err)
		}
		_ = conn.SetWriteDeadline(time.Time{})
	}
	if err != nil {
		_ = tc.Close()
		return nil, fmt.Errorf("tcp-mux carrier client: %w", err)
	}
	s.closeConn = tc.Close
	s.connect = time.Since(started)
	s.opened.Store(0)
	s.start()
	return &MuxCarrier{tc: tc, s: s, id: ch.Carrier()}, nil
}

// muxCarrierOptions checks o for a carrier's end and fills in its
// defaults, and reads the host's congestion control.
func muxCarrierOptions(o Options) (Options, string, error) {
	if o.Channels != 0 && o.Channels != muxCarrierChannels {
		return o, "", fmt.Errorf("tcp-mux carrier: Options.Channels is %d: a carrier opens channels one at a time, up to %d; leave it 0", o.Channels, muxCarrierChannels)
	}
	if len(o.CarrierSecret) == 0 {
		return o, "", errors.New("tcp-mux carrier: Options.CarrierSecret is empty: without it a carrier listener serves anyone who reaches its address; give both ends the same secret")
	}
	o.Channels = muxCarrierChannels
	if err := checkMux(o); err != nil {
		return o, "", err
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	hostCC, err := HostCongestionControl()
	if err != nil {
		return o, "", fmt.Errorf("tcp-mux carrier: %w", err)
	}
	return o, hostCC, nil
}

// ID is the carrier's id, the same at both ends.
func (c *MuxCarrier) ID() uint64 { return c.id }

// Open opens the next channel. Its Index is its place in the order of
// opening, 0 first.
func (c *MuxCarrier) Open(ctx context.Context) (CarrierChannel, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// The open frames go out in the order of the indices: the listener
	// hands channels over in that order, and refuses another.
	c.openMu.Lock()
	defer c.openMu.Unlock()
	c.mu.Lock()
	i := c.next
	c.mu.Unlock()
	if i >= len(c.s.chans) {
		return nil, fmt.Errorf("tcp-mux carrier: a carrier opens at most %d channels; dial another", len(c.s.chans))
	}
	ch := c.s.chans[i]
	c.s.opened.Store(int32(i + 1))
	ch.wmu.Lock()
	_, err := c.s.writeFrame(ch, muxOpen, nil, false)
	ch.wmu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("tcp-mux carrier: opening channel %d: %w", i, err)
	}
	c.mu.Lock()
	c.next++
	c.mu.Unlock()
	return muxCarrierChannel{muxChannel: ch, carrier: c.id}, nil
}

// State is the connection's, as a tcp-mux session's (State.TCP lists it
// with Channel -1); Channels counts the channels opened.
func (c *MuxCarrier) State() State {
	st := c.s.State()
	c.mu.Lock()
	st.Channels = c.next
	c.mu.Unlock()
	return st
}

// Close closes every channel and the connection.
func (c *MuxCarrier) Close() error { return c.s.Close() }

// muxCarrierChannel is a channel of a tcp-mux carrier; at the listener's
// end, closed is told of its Close.
type muxCarrierChannel struct {
	*muxChannel
	carrier uint64
	closed  func()
}

func (c muxCarrierChannel) Carrier() uint64 { return c.carrier }

func (c muxCarrierChannel) Close() error {
	err := c.muxChannel.Close()
	if c.closed != nil {
		c.closed()
	}
	return err
}

// MuxCarrierListener is the server end of tcp-mux carriers: it accepts
// carriers from any number of clients and hands over their channels as
// they are opened.
type MuxCarrierListener struct {
	ln     *CarrierListener
	opts   Options
	hostCC string
	admit  *muxAdmit
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu       sync.Mutex
	queue    []accepted
	ready    chan struct{}        // a token when queue is not empty
	sessions map[*MuxSession]bool // the carriers' sessions being served
	ended    []TCPConnState       // the last maxEndedListed to end
	unlisted int                  // carriers ended and no longer in ended
	refusals int                  // errors in queue
	opened   int
	err      error // why the listener stopped
	stopped  chan struct{}
}

// accepted is a channel or a refusal, for Accept.
type accepted struct {
	ch  CarrierChannel
	err error
}

// ListenMuxCarrier listens at addr for tcp-mux carriers. Options are the
// tcp arm's, as for ListenCarrier, with CarrierSecret, which a
// tcp-mux carrier listener requires. CarrierLimit and CarrierPeerLimit
// bound carriers waiting for their hello (for at most 10 s;
// past a bound the oldest is closed) and carriers served (past a bound a
// carrier is refused with a frame that says why), each counted apart. The
// listener ends at Close or when ctx ends.
func ListenMuxCarrier(ctx context.Context, addr string, o Options) (*MuxCarrierListener, error) {
	o, hostCC, err := muxCarrierOptions(o)
	if err != nil {
		return nil, err
	}
	// The transport's bounds hold carriers waiting for their hello and
	// carriers served, each bounded apart by admit.
	admit := newMuxAdmit(o)
	lo := o
	lo.Channels = 0
	if lo.CarrierLimit >= 0 && lo.CarrierPeerLimit >= 0 {
		lo.CarrierLimit, lo.CarrierPeerLimit = 2*admit.limit, 2*admit.peerLimit
	}
	ln, err := ListenCarrier(ctx, ArmTCP, addr, lo)
	if err != nil {
		return nil, fmt.Errorf("tcp-mux carrier: %w", err)
	}
	l := &MuxCarrierListener{ln: ln, opts: o, hostCC: hostCC, admit: admit, ready: make(chan struct{}, 1),
		sessions: map[*MuxSession]bool{}, stopped: make(chan struct{})}
	l.ctx, l.cancel = context.WithCancel(ctx)
	l.wg.Go(l.acceptLoop)
	return l, nil
}

// Addr is the address the listener listens on.
func (l *MuxCarrierListener) Addr() net.Addr { return l.ln.Addr() }

// acceptLoop takes the transport listener's connections until it ends.
func (l *MuxCarrierListener) acceptLoop() {
	defer close(l.stopped)
	for {
		ch, err := l.ln.Accept(l.ctx)
		var ce *ChannelError
		switch {
		case err == nil:
			l.wg.Go(func() { l.serve(ch) })
			continue
		case l.ctx.Err() == nil && errors.As(err, &ce):
			l.push(accepted{err: err})
			continue
		case l.ctx.Err() != nil:
			err = fmt.Errorf("tcp-mux carrier listener: closed: %w", net.ErrClosed)
		default:
			err = fmt.Errorf("tcp-mux carrier listener: %w", err)
		}
		l.mu.Lock()
		l.err = err
		l.mu.Unlock()
		return
	}
}

// maxMuxRefusalsQueued is how many refusals a MuxCarrierListener keeps
// for Accept; past it the oldest is dropped, so that a flood of bad
// connections costs no more while Accept is not called.
const maxMuxRefusalsQueued = 64

func (l *MuxCarrierListener) push(a accepted) {
	l.mu.Lock()
	if a.err != nil {
		if l.refusals >= maxMuxRefusalsQueued {
			i := slices.IndexFunc(l.queue, func(q accepted) bool { return q.err != nil })
			l.queue = slices.Delete(l.queue, i, i+1)
			l.refusals--
		}
		l.refusals++
	}
	l.queue = append(l.queue, a)
	l.mu.Unlock()
	signal(l.ready)
}

// serve reads a carrier connection's hello and hands over its channels as
// they open; once the connection has ended and every channel handed over
// is closed, it closes the session.
func (l *MuxCarrierListener) serve(ch CarrierChannel) {
	conn, _ := carrierTCPConn(ch)
	s, release, err := l.hello(ch, conn)
	if err != nil {
		l.push(accepted{err: &ChannelError{Arm: ArmTCPMux, Role: "server", Channel: -1,
			Step: fmt.Sprintf("carrier (from %s)", conn.RemoteAddr()), Err: err}})
		return
	}
	defer release()
	s.closeConn = ch.Close
	open := 0 // channels handed over and not yet closed, under l.mu
	allClosed := make(chan struct{}, 1)
	closed := func() {
		l.mu.Lock()
		open--
		if open == 0 {
			signal(allClosed)
		}
		l.mu.Unlock()
	}
	next := 0
	s.onOpen = func(c *muxChannel) error {
		if c.index != next {
			return fmt.Errorf("the client opened channel %d, and the next is %d", c.index, next)
		}
		next++
		l.mu.Lock()
		open++
		l.opened++
		l.mu.Unlock()
		l.push(accepted{ch: muxCarrierChannel{muxChannel: c, carrier: ch.Carrier(), closed: sync.OnceFunc(closed)}})
		return nil
	}
	l.mu.Lock()
	if l.ctx.Err() != nil {
		l.mu.Unlock()
		_ = ch.Close()
		return
	}
	l.sessions[s] = true
	l.mu.Unlock()
	s.opened.Store(0)
	s.start()
	select {
	case <-s.demuxed:
	case <-l.ctx.Done():
	}
	select {
	case <-s.failed:
		if l.ctx.Err() == nil {
			// failErr without its "tcp-mux server: ", which the
			// ChannelError says.
			l.push(accepted{err: &ChannelError{Arm: ArmTCPMux, Role: "server", Channel: -1,
				Step: fmt.Sprintf("carrier %016x (from %s)", ch.Carrier(), conn.RemoteAddr()), Err: errors.Unwrap(s.failErr)}})
		}
	default:
	}
	for l.ctx.Err() == nil {
		l.mu.Lock()
		n := open
		l.mu.Unlock()
		if n == 0 {
			break
		}
		select {
		case <-allClosed:
		case <-l.ctx.Done():
		}
	}
	st := s.State()
	_ = s.Close()
	l.mu.Lock()
	delete(l.sessions, s)
	for _, c := range st.TCP {
		if len(l.ended) >= maxEndedListed {
			l.ended = slices.Delete(l.ended, 0, 1)
			l.unlisted++
		}
		l.ended = append(l.ended, c)
	}
	l.mu.Unlock()
}

// hello reads a carrier's hello, counted as waiting for it, and admits
// the carrier; a carrier refused is told why, and ch is closed on any
// error.
func (l *MuxCarrierListener) hello(ch CarrierChannel, conn *net.TCPConn) (*MuxSession, func(), error) {
	peer := carrierPeer(conn.RemoteAddr())
	w := l.admit.wait(peer, func() { _ = ch.Close() })
	s, err := newMuxSession(conn, "server", l.opts, time.Now(), l.hostCC)
	if err == nil {
		err = readMuxHello(l.ctx, conn, l.opts, muxModeCarrier)
	}
	if err = l.admit.done(w, err); err != nil {
		_ = ch.Close()
		return nil, nil, err
	}
	release, err := l.admit.serve(peer)
	if err != nil {
		refuseMux(ch, conn, err)
		return nil, nil, fmt.Errorf("refused: %w", err)
	}
	return s, release, nil
}

// Accept waits for the next channel a client opens. A *ChannelError
// is a carrier refused (a bad header, secret or hello) or one whose
// connection failed (of those not yet taken, the last 64 are kept), and
// Accept may be called again; an error wrapping net.ErrClosed means the listener has
// ended (with ErrCarrierListenerFailed if its socket failed).
func (l *MuxCarrierListener) Accept(ctx context.Context) (CarrierChannel, error) {
	for {
		l.mu.Lock()
		if len(l.queue) > 0 {
			a := l.queue[0]
			l.queue = l.queue[1:]
			if a.err != nil {
				l.refusals--
			}
			if len(l.queue) > 0 {
				signal(l.ready)
			}
			l.mu.Unlock()
			return a.ch, a.err
		}
		l.mu.Unlock()
		select {
		case <-l.ready:
		case <-l.stopped:
			l.mu.Lock()
			err := l.err
			l.mu.Unlock()
			return nil, err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// State lists the carrier connections open and the last 64 to
// end, each with Channel -1; Channels counts
// the channels handed over and UnlistedConnections the ended connections
// no longer listed.
func (l *MuxCarrierListener) State() State {
	l.mu.Lock()
	sessions := make([]*MuxSession, 0, len(l.sessions))
	for s := range l.sessions {
		sessions = append(sessions, s)
	}
	tcp := append([]TCPConnState(nil), l.ended...)
	opened, unlisted := l.opened, l.unlisted
	l.mu.Unlock()
	st := State{
		Arm: ArmTCPMux, Role: "server", Channels: opened, UnlistedConnections: unlisted,
		CongestionControl: l.opts.CongestionControl, RequestedCongestionControl: l.opts.CongestionControl, HostCongestionControl: l.hostCC,
	}
	if st.CongestionControl == "" {
		st.CongestionControl = l.hostCC
	}
	for _, s := range sessions {
		tcp = append(tcp, s.State().TCP...)
	}
	st.TCP = tcp
	return st
}

// Close stops listening and closes every carrier's connection and channel.
func (l *MuxCarrierListener) Close() error {
	l.cancel()
	err := l.ln.Close()
	l.wg.Wait()
	return err
}
