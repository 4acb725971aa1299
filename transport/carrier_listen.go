package transport

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/quic-go/quic-go"
)

// maxEndedListed is how many connections that have ended a carrier
// listener's State still lists (the last to end).
const maxEndedListed = 64

// ErrCarrierListenerFailed is wrapped, with net.ErrClosed, by what
// CarrierListener.Accept returns once its listening socket has failed
// (and not after Close).
var ErrCarrierListenerFailed = errors.New("transport: the carrier listener's socket failed, and the listener has stopped")

const (
	// acceptBackoffMax bounds the pause between accepts while they fail
	// for want of a resource (file descriptors, buffers).
	acceptBackoffMax = time.Second
	// maxListedStreams bounds the channels a carrier listener's QUIC
	// connection lists in its State.
	maxListedStreams = MaxChannels
	// maxReplayNonces bounds the nonces remembered within CarrierClockSkew.
	maxReplayNonces = 1 << 16
	// quicRefused is the application error code a refused QUIC
	// connection is closed with.
	quicRefused quic.ApplicationErrorCode = 2
)

// CarrierListener is the server end of carriers: it hands over each
// channel as it arrives, from any number of carriers.
//
// What it holds at once is bounded (Options.CarrierLimit in all,
// CarrierPeerLimit from one peer), each counted apart: channels handed
// over and not yet closed; QUIC connections; and connections or streams
// still waiting for their header. A channel or QUIC connection beyond a
// bound is refused. One waiting for its header beyond a bound displaces
// the one that has waited longest, from the same peer, or else from the
// peer with the most waiting, so a peer that holds connections open
// without a header displaces only its own. A channel whose carrier id and
// index are those of a channel still open is refused. A quic-per-channel
// connection is closed Options.IdleTimeout after its channel was closed.
type CarrierListener struct {
	arm    Arm
	opts   Options
	addr   net.Addr
	hostCC string
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	ready  chan acceptedChannel

	mu      sync.Mutex
	started time.Time
	count   int
	base    []func() error // the listening socket and QUIC transport
	seq     uint64
	conns   map[uint64]func() error // the live connections' closers
	tcp     map[uint64]*tcpConn
	quic    map[uint64]*quicConn
	// endedTCP and endedQUIC are the last maxEndedListed connections to
	// end, as they were then; unlisted counts those dropped from them.
	endedTCP  []TCPConnState
	endedQUIC []QUICConnState
	unlisted  int
	waiting   waitList
	held      peerCount // channels handed over and not yet closed
	qconns    peerCount // QUIC connections
	live      map[carrierChannelKey]bool
	replay    map[[carrierNonceLen]byte]time.Time
	sweepAt   int
	fatal     error

	closeOnce sync.Once
	closeErr  error
}

type acceptedChannel struct {
	ch  CarrierChannel
	err error
}

type carrierChannelKey struct {
	carrier uint64
	index   int
}

// ListenCarrier accepts carriers of arm on addr ("ip:port"; port 0 picks
// one, see Addr) until ctx ends or Close. For the QUIC arms
// opts.Certificate must hold the certificate and key. Options.Channels
// bounds the streams open at once on one QUIC connection (0 means
// MaxChannels). With Options.CarrierSecret set, only a client that holds
// the secret gets a channel; without it, anyone who reaches addr does.
func ListenCarrier(ctx context.Context, arm Arm, addr string, opts Options) (*CarrierListener, error) {
	o, err := carrierOptions(arm, opts)
	if err != nil {
		return nil, err
	}
	lctx, cancel := context.WithCancel(ctx)
	l := &CarrierListener{arm: arm, opts: o, ctx: lctx, cancel: cancel, ready: make(chan acceptedChannel, 16),
		conns: map[uint64]func() error{}, tcp: map[uint64]*tcpConn{}, quic: map[uint64]*quicConn{},
		live: map[carrierChannelKey]bool{}, replay: map[[carrierNonceLen]byte]time.Time{}}
	if arm == ArmTCP {
		err = l.listenTCP(addr)
	} else {
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
func (l *CarrierListener) Addr() net.Addr { return l.addr }

// Accept returns the next channel to arrive, with its carrier header read.
// A *ChannelError is about one incoming connection or stream (a bad
// header, a refusal, a failed handshake step) or a passing failure to
// accept (out of file descriptors: the listener backs off and goes on):
// the listener is still running, so call Accept again. After Close, or
// once the listener's socket has failed, Accept returns an error wrapping
// net.ErrClosed (and ErrCarrierListenerFailed if it failed), never a
// *ChannelError.
func (l *CarrierListener) Accept(ctx context.Context) (CarrierChannel, error) {
	select {
	case a := <-l.ready:
		return a.ch, a.err
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-l.ctx.Done():
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.fatal != nil {
			// The cause is formatted, not wrapped: it is a *ChannelError,
			// which would say the listener goes on.
			return nil, fmt.Errorf("%w: %v (%w)", ErrCarrierListenerFailed, l.fatal, net.ErrClosed)
		}
		return nil, fmt.Errorf("transport: %s carrier listener: %w", l.arm, net.ErrClosed)
	}
}

// deliver hands ch over, waiting for Accept; it closes ch if the listener
// closes first.
func (l *CarrierListener) deliver(ch CarrierChannel) {
	select {
	case l.ready <- acceptedChannel{ch: ch}:
	case <-l.ctx.Done():
		_ = ch.Close()
	}
}

// report hands an error to Accept if there is room for it, and otherwise
// drops it: a flood of refusals must not pile up goroutines or memory
// while the caller is slow to call Accept.
func (l *CarrierListener) report(err error) {
	select {
	case l.ready <- acceptedChannel{err: err}:
	default:
	}
}

func (l *CarrierListener) fail(err error) {
	l.mu.Lock()
	if l.fatal == nil {
		l.fatal = err
	}
	l.mu.Unlock()
	l.cancel()
}

// State reads what is in force now on every live connection, and what was
// on the last 64 to end (listed first, as they were when they
// ended), as Session.State does; Channels counts the channels delivered
// and UnlistedConnections the ended connections no longer listed.
func (l *CarrierListener) State() State {
	l.mu.Lock()
	defer l.mu.Unlock()
	var tcp []*tcpConn
	for _, id := range slices.Sorted(maps.Keys(l.tcp)) {
		tcp = append(tcp, l.tcp[id])
	}
	var qcs []*quicConn
	for _, id := range slices.Sorted(maps.Keys(l.quic)) {
		qcs = append(qcs, l.quic[id])
	}
	return carrierState(l.arm, "server", l.count, l.started, l.opts, l.hostCC, tcp, qcs, l.endedTCP, l.endedQUIC, l.unlisted)
}

// Close stops accepting and closes every connection accepted, with its
// channels.
func (l *CarrierListener) Close() error {
	l.closeOnce.Do(func() {
		l.cancel()
		l.keepLast()
		l.closeErr = l.closeAll()
		l.wg.Wait()
		for {
			select {
			case a := <-l.ready:
				if a.ch != nil {
					_ = a.ch.Close()
				}
				continue
			default:
			}
			break
		}
	})
	return l.closeErr
}

// keepLast reads every held TCP connection's TCP_INFO before the sockets
// close, for State to report after.
func (l *CarrierListener) keepLast() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, tc := range l.tcp {
		tc.keepLast(time.Since(l.started))
	}
}

func (l *CarrierListener) closeAll() error {
	l.mu.Lock()
	conns := slices.Collect(maps.Values(l.conns))
	clear(l.conns)
	base := l.base
	l.base = nil
	l.mu.Unlock()
	var errs []error
	// Connections first, then the listening socket and transport.
	for _, f := range conns {
		if err := f(); err != nil && !isClosedErr(err) {
			errs = append(errs, err)
		}
	}
	for i := len(base) - 1; i >= 0; i-- {
		if err := base[i](); err != nil && !isClosedErr(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// temporaryAcceptError reports whether an accept failed for want of a
// resource that may come back (file descriptors, memory, buffers), or for
// one incoming connection alone.
func temporaryAcceptError(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED, syscall.ECONNRESET} {
		if errors.Is(err, e) {
			return true
		}
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func (l *CarrierListener) listenTCP(addr string) error {
	o := l.opts
	if o.CongestionControl != "" {
		if err := CheckCongestionControl(o.CongestionControl); err != nil {
			return err
		}
	}
	var err error
	if l.hostCC, err = HostCongestionControl(); err != nil {
		return err
	}
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error { return controlTCP(c, o) }}
	listen := lc.Listen
	if o.Listen != nil {
		listen = o.Listen
	}
	ln, err := listen(l.ctx, "tcp", addr)
	if err != nil {
		return chanErr(ArmTCP, "server", -1, "listen", err)
	}
	l.addr = ln.Addr()
	l.keepBase(ln.Close)
	l.wg.Go(func() { l.acceptTCP(ln) })
	return nil
}

func (l *CarrierListener) acceptTCP(ln net.Listener) {
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if l.ctx.Err() != nil {
				return
			}
			if !temporaryAcceptError(err) {
				l.fail(chanErr(ArmTCP, "server", -1, "accept", err))
				return
			}
			if backoff == 0 {
				backoff = 5 * time.Millisecond
				l.report(chanErr(ArmTCP, "server", -1, "accept", fmt.Errorf("%w: pausing, up to %v at a time, until accepting works again", err, acceptBackoffMax)))
			} else {
				backoff = min(2*backoff, acceptBackoffMax)
			}
			select {
			case <-time.After(backoff):
			case <-l.ctx.Done():
				return
			}
			continue
		}
		backoff = 0
		tc, ok := c.(*net.TCPConn)
		if !ok {
			_ = c.Close()
			l.fail(chanErr(ArmTCP, "server", -1, "accept", fmt.Errorf("the listener from Options.Listen gave a %T; it must give *net.TCPConn", c)))
			return
		}
		id, ok := l.keep(c.Close)
		if !ok {
			return
		}
		w := l.wait(carrierPeer(c.RemoteAddr()), func() { _ = c.SetReadDeadline(time.Now()) })
		l.wg.Go(func() { l.handleTCP(id, tc, w) })
	}
}

func (l *CarrierListener) handleTCP(id uint64, c *net.TCPConn, w *waiter) {
	fail := func(step string, err error) {
		l.endTCP(id, nil)
		_ = c.Close()
		l.report(chanErr(ArmTCP, "server", -1, fmt.Sprintf("%s (from %s)", step, c.RemoteAddr()), err))
	}
	tc, err := setupTCP(c, -1, l.opts)
	if err != nil {
		l.unwait(w)
		fail("socket options", err)
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(l.opts.HandshakeTimeout))
	if w.displaced.Load() {
		// Displaced before the deadline above was set, which undid it.
		_ = c.SetReadDeadline(time.Now())
	}
	stop := context.AfterFunc(l.ctx, func() { _ = c.SetReadDeadline(time.Now()) })
	h, raw, err := readCarrierHeader(c)
	stop()
	l.unwait(w)
	if err == nil {
		err = l.checkProof(h, raw)
	}
	if err != nil {
		fail("header", w.why(err))
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	tc.index = h.index
	release, err := l.hold(w.peer, h, func() { l.tcp[id] = tc })
	if err != nil {
		fail(fmt.Sprintf("channel %d", h.index), err)
		return
	}
	l.deliver(carrierTCPChannel{tcpChannel: tcpChannel{TCPConn: c, index: h.index}, carrier: h.id, release: sync.OnceFunc(func() {
		release()
		l.mu.Lock()
		started := l.started
		l.mu.Unlock()
		st := tc.state(time.Since(started))
		l.endTCP(id, &st)
	})})
}
