package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultFallbackGiveUp is how long DialFallback waits for the QUIC
// handshake before it abandons QUIC and dials per-channel TCP, when the
// caller passes zero: long enough for a handshake that lost one packet of
// its first flight on paths up to about 180 ms RTT (docs/fallback.md says
// why this value).
const DefaultFallbackGiveUp = 400 * time.Millisecond

// QUICOutcome is how DialFallback's QUIC attempt ended.
type QUICOutcome string

const (
	// QUICUsed: the handshake completed and every stream opened before the
	// give-up time; the session is QUIC.
	QUICUsed QUICOutcome = "used"
	// QUICFailed: the attempt ended with an error before the give-up time,
	// for example an ICMP port unreachable (nothing listens on UDP), and
	// TCP was dialled at once.
	QUICFailed QUICOutcome = "failed"
	// QUICGaveUp: nothing usable by the give-up time (UDP silently dropped,
	// or a handshake too slow); the attempt was abandoned and TCP dialled.
	QUICGaveUp QUICOutcome = "gave-up"
	// QUICCancelled: the caller's context ended during the QUIC attempt;
	// TCP was not tried.
	QUICCancelled QUICOutcome = "cancelled"
)

// FallbackResult records one DialFallback: when each step started and
// ended, as offsets from Started, and what each step concluded. It is
// returned whether or not a session was opened, marshals to JSON
// (durations in nanoseconds), and implements slog.LogValuer so a harness
// can log it as one record.
type FallbackResult struct {
	// GiveUp is the give-up time in force.
	GiveUp time.Duration `json:"give_up_ns"`
	// Started is when the attempt began (just before the QUIC dial).
	Started time.Time `json:"started"`
	// QUICOutcome says how the QUIC attempt ended, and QUICEnded when:
	// the handshake's completion, the error, or the give-up.
	QUICOutcome QUICOutcome   `json:"quic_outcome"`
	QUICEnded   time.Duration `json:"quic_ended_ns"`
	QUICError   string        `json:"quic_error,omitempty"`
	// TCPTried says whether TCP was dialled, TCPStarted when.
	TCPTried   bool          `json:"tcp_tried"`
	TCPStarted time.Duration `json:"tcp_started_ns,omitempty"`
	TCPError   string        `json:"tcp_error,omitempty"`
	// Arm is the arm of the session returned (ArmQUIC or ArmTCP), empty
	// when none was. Ready is when that session was usable: every channel
	// connected and its header written.
	Arm   Arm           `json:"arm,omitempty"`
	Ready time.Duration `json:"ready_ns,omitempty"`
	// Elapsed is the whole of DialFallback, success or not.
	Elapsed time.Duration `json:"elapsed_ns"`
}

// LogValue makes a FallbackResult one structured log group.
func (r FallbackResult) LogValue() slog.Value {
	attrs := []slog.Attr{
		slog.Duration("give_up", r.GiveUp),
		slog.String("quic", string(r.QUICOutcome)),
		slog.Duration("quic_ended", r.QUICEnded),
	}
	if r.QUICError != "" {
		attrs = append(attrs, slog.String("quic_error", r.QUICError))
	}
	if r.TCPTried {
		attrs = append(attrs, slog.Duration("tcp_started", r.TCPStarted))
	}
	if r.TCPError != "" {
		attrs = append(attrs, slog.String("tcp_error", r.TCPError))
	}
	attrs = append(attrs, slog.String("arm", string(r.Arm)), slog.Duration("ready", r.Ready), slog.Duration("elapsed", r.Elapsed))
	return slog.GroupValue(attrs...)
}

var errGaveUp = errors.New("QUIC give-up time reached")

// fallbackOptions splits one Options into what each arm accepts: the
// TCP-only settings are dropped for QUIC and the QUIC-only ones for TCP.
func fallbackOptions(o Options) (quicOpts, tcpOpts Options, err error) {
	quicOpts, tcpOpts = o, o
	quicOpts.CongestionControl, quicOpts.NotSentLowat = "", 0
	tcpOpts.Priority, tcpOpts.PriorityChannel = false, 0
	_, qerr := quicOpts.validate(ArmQUIC)
	_, terr := tcpOpts.validate(ArmTCP)
	return quicOpts, tcpOpts, errors.Join(qerr, terr)
}

// DialFallback opens a session to a server that accepts both arms (see
// ListenFallback): first one QUIC connection with a stream per channel
// (ArmQUIC) to quicAddr; if that is not usable within giveUp
// (DefaultFallbackGiveUp when zero), or fails sooner, it tears the attempt
// down and dials opts.Channels TCP connections (ArmTCP) to tcpAddr. A
// closed UDP port fails the QUIC attempt at once (IP_RECVERR is set for
// the handshake); a silent drop costs the full giveUp. Options that
// concern one arm only (CongestionControl and NotSentLowat for TCP,
// Priority for QUIC) apply to that arm. ctx bounds the whole call; if it
// ends during the QUIC attempt, TCP is not tried. The FallbackResult is
// filled in on every return. docs/fallback.md has why the fallback is
// sequential and the Linux details.
func DialFallback(ctx context.Context, quicAddr, tcpAddr string, opts Options, giveUp time.Duration) (*Session, FallbackResult, error) {
	res := FallbackResult{Started: time.Now()}
	since := func() time.Duration { return time.Since(res.Started) }
	done := func(s *Session, err error) (*Session, FallbackResult, error) {
		res.Elapsed = since()
		return s, res, err
	}
	if giveUp < 0 {
		return done(nil, fmt.Errorf("transport: fallback give-up time %v is negative: use a positive duration, or 0 for %v", giveUp, DefaultFallbackGiveUp))
	}
	if giveUp == 0 {
		giveUp = DefaultFallbackGiveUp
	}
	res.GiveUp = giveUp
	qo, to, err := fallbackOptions(opts)
	if err != nil {
		return done(nil, err)
	}

	// The QUIC attempt, with ICMP errors reported on its socket.
	var mu sync.Mutex
	var sockets []udpSocket
	inner := qo.wrapUDP
	qo.wrapUDP = func(s udpSocket) udpSocket {
		if inner != nil {
			s = inner(s)
		}
		// Best effort: without it the attempt still works, it only
		// notices a closed port no sooner than a silent drop.
		_ = setRecvErr(s, true)
		s = quietNoBufs{s}
		mu.Lock()
		sockets = append(sockets, s)
		mu.Unlock()
		return s
	}
	qctx, cancel := context.WithTimeoutCause(ctx, giveUp, errGaveUp)
	s, err := Dial(qctx, ArmQUIC, quicAddr, qo)
	gaveUp := context.Cause(qctx) == errGaveUp
	cancel()
	res.QUICEnded = since()
	if err == nil {
		mu.Lock()
		for _, sock := range sockets {
			_ = setRecvErr(sock, false)
		}
		mu.Unlock()
		res.QUICOutcome, res.Arm, res.Ready = QUICUsed, ArmQUIC, res.QUICEnded
		return done(s, nil)
	}
	res.QUICError = err.Error()
	switch {
	case ctx.Err() != nil:
		res.QUICOutcome = QUICCancelled
		return done(nil, fmt.Errorf("transport: fallback dial cancelled during the QUIC attempt: %w", context.Cause(ctx)))
	case gaveUp:
		res.QUICOutcome = QUICGaveUp
	default:
		res.QUICOutcome = QUICFailed
	}

	res.TCPTried, res.TCPStarted = true, since()
	s, err = Dial(ctx, ArmTCP, tcpAddr, to)
	if err != nil {
		res.TCPError = err.Error()
		return done(nil, fmt.Errorf("transport: fallback: QUIC %s (%s), then TCP failed: %w", res.QUICOutcome, res.QUICError, err))
	}
	res.Arm, res.Ready = ArmTCP, since()
	return done(s, nil)
}

// FallbackListener accepts sessions from DialFallback clients: QUIC
// (ArmQUIC) on a UDP port and per-channel TCP on the TCP port of the same
// number. A server must listen on both for the fallback to mean anything:
// the client's TCP arm is the one it uses when UDP does not get through.
type FallbackListener struct {
	quic, tcp *Listener
	results   chan acceptResult
	ctx       context.Context
	cancel    context.CancelFunc
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error

	mu    sync.Mutex
	alive int
	fatal []string
}

// ListenFallback listens for both arms on addr ("ip:port"): TCP on the
// port, QUIC on the UDP port of the same number. With port 0 the TCP port
// is picked first and QUIC takes the same number (tried a few times if
// that UDP port is taken). Options that concern one arm only are applied to
// that arm, as in DialFallback; for QUIC opts.Certificate must hold the
// certificate and key.
func ListenFallback(ctx context.Context, addr string, opts Options) (*FallbackListener, error) {
	qo, to, err := fallbackOptions(opts)
	if err != nil {
		return nil, err
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("transport: fallback listen address %q: %w (want ip:port)", addr, err)
	}
	lctx, cancel := context.WithCancel(ctx)
	l := &FallbackListener{results: make(chan acceptResult, 16), ctx: lctx, cancel: cancel}
	tries := 1
	if port == "0" {
		tries = 5
	}
	for i := range tries {
		l.tcp, err = Listen(lctx, ArmTCP, addr, to)
		if err != nil {
			cancel()
			return nil, err
		}
		p := strconv.Itoa(l.tcp.Addr().(*net.TCPAddr).Port)
		l.quic, err = Listen(lctx, ArmQUIC, net.JoinHostPort(host, p), qo)
		if err == nil {
			break
		}
		_ = l.tcp.Close()
		if i == tries-1 {
			cancel()
			return nil, fmt.Errorf("transport: QUIC cannot listen on UDP port %s beside TCP: %w", p, err)
		}
	}
	l.alive = 2
	for _, ln := range []*Listener{l.quic, l.tcp} {
		l.wg.Add(1)
		go l.pump(ln)
	}
	return l, nil
}

// pump forwards one listener's sessions and per-session errors to Accept.
// When that listener's socket fails it stops; when both have, the
// FallbackListener closes.
func (l *FallbackListener) pump(ln *Listener) {
	defer l.wg.Done()
	for {
		s, err := ln.Accept(l.ctx)
		if l.ctx.Err() != nil {
			if s != nil {
				_ = s.Close()
			}
			return
		}
		if err != nil && ln.ctx.Err() != nil {
			l.mu.Lock()
			l.fatal = append(l.fatal, err.Error())
			l.alive--
			if l.alive == 0 {
				l.cancel()
			}
			l.mu.Unlock()
			return
		}
		select {
		case l.results <- acceptResult{s, err}:
		case <-l.ctx.Done():
			if s != nil {
				_ = s.Close()
			}
			return
		}
	}
}

// QUICAddr is the UDP address QUIC listens on.
func (l *FallbackListener) QUICAddr() net.Addr { return l.quic.Addr() }

// TCPAddr is the TCP address the per-channel TCP arm listens on.
func (l *FallbackListener) TCPAddr() net.Addr { return l.tcp.Addr() }

// Accept waits for the next complete session of either arm (Session.Arm
// says which). A *ChannelError is about one incoming session (it may wrap
// quic-go's errors, which match net.ErrClosed when a peer closed early) and
// leaves the listener running: call Accept again. A QUIC peer that closes
// as soon as its handshake completes may produce no error at all: quic-go
// discards a connection that is closed before it reaches its accept queue.
// Once the listener is
// closed, by Close, its context, or the failure of both sockets, Accept
// returns an error that wraps net.ErrClosed and is not a *ChannelError.
func (l *FallbackListener) Accept(ctx context.Context) (*Session, error) {
	if l.ctx.Err() == nil {
		select {
		case r := <-l.results:
			return r.s, r.err
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-l.ctx.Done():
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.fatal) > 0 {
		return nil, fmt.Errorf("transport: fallback listener: %w after its sockets failed: %s", net.ErrClosed, strings.Join(l.fatal, "; "))
	}
	return nil, fmt.Errorf("transport: fallback listener: %w", net.ErrClosed)
}

// Close stops both listeners. Sessions already returned by Accept stay
// open; sessions not yet accepted are closed.
func (l *FallbackListener) Close() error {
	l.closeOnce.Do(func() {
		l.cancel()
		l.closeErr = errors.Join(l.quic.Close(), l.tcp.Close())
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
