package spicetunnel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/shakenfist/quicbench/spicelike/spiceproto"
	"github.com/shakenfist/quicbench/transport"
)

// Opener opens carrier channels one at a time: a *transport.Carrier, or
// another arm's carrier such as transport.DialMuxCarrier's.
type Opener interface {
	Open(ctx context.Context) (transport.CarrierChannel, error)
}

// Acceptor hands over carrier channels as they arrive: a
// *transport.CarrierListener, or another arm's such as
// transport.ListenMuxCarrier's. An error that is a *transport.ChannelError
// is one channel refused, and Accept may be called again; one that wraps
// transport.ErrCarrierListenerFailed or net.ErrClosed ends the listener.
type Acceptor interface {
	Accept(ctx context.Context) (transport.CarrierChannel, error)
}

// ClientEnd is the end a SPICE client connects to: every TCP connection it
// accepts (one per SPICE channel) is carried over a new channel of the
// carrier.
type ClientEnd struct {
	// Listener accepts the SPICE client's connections.
	Listener net.Listener
	// Carrier opens a channel per connection, towards the ServerEnd.
	Carrier Opener
	// Trace, when set, gets a record per message.
	Trace *Tracer
	// Events, when set, is called for every message (from the relay's
	// goroutines, concurrently; it must not block).
	Events func(Event)
	Log    *slog.Logger
	// CaptureDir, when set, receives every connection's raw bytes, one
	// new file per direction: <carrier>-ch<N>-c2s.bin and
	// <carrier>-ch<N>-s2c.bin, where <carrier> is the carrier's id in 16
	// hex digits. A file that exists already is left alone, and that
	// direction not captured.
	CaptureDir string

	stats statsList
}

// ServerEnd is the end that reaches spice-server: every channel the
// carrier listener delivers is carried to a new TCP connection made by
// Dial. Whoever gets a channel from the listener gets that connection:
// give the listener Options.CarrierSecret (see the package doc).
type ServerEnd struct {
	// Listener hands over the carriers' channels.
	Listener Acceptor
	// Dial connects to spice-server.
	Dial   func(ctx context.Context) (net.Conn, error)
	Trace  *Tracer
	Events func(Event)
	// Log gets a warning for each channel refused or not carried: the
	// first few at once, then at most one a second, with a count of those
	// left out.
	Log        *slog.Logger
	CaptureDir string

	stats statsList
}

type statsList struct {
	mu  sync.Mutex
	all []ChannelStats
}

func (s *statsList) add(c ChannelStats) {
	s.mu.Lock()
	s.all = append(s.all, c)
	s.mu.Unlock()
}

func (s *statsList) list() []ChannelStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]ChannelStats{}, s.all...)
}

// Channels is what every connection relayed so far carried, in the order
// they ended (empty, not nil, when none has).
func (e *ClientEnd) Channels() []ChannelStats { return e.stats.list() }

// Channels is what every connection relayed so far carried, in the order
// they ended (empty, not nil, when none has).
func (e *ServerEnd) Channels() []ChannelStats { return e.stats.list() }

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// Serve accepts the client's connections until ctx ends or the listener
// fails, and relays each. Accepting that fails for want of a resource
// (file descriptors) is retried after a pause. It returns once every
// relay has ended; ctx's end closes them. The carrier is the caller's to
// close.
func (e *ClientEnd) Serve(ctx context.Context) error {
	log := logger(e.Log)
	var wg sync.WaitGroup
	var relays sync.Map
	stop := context.AfterFunc(ctx, func() {
		_ = e.Listener.Close()
		relays.Range(func(k, _ any) bool { k.(*relay).closeBoth(); return true })
	})
	defer stop()
	var err error
	var backoff time.Duration
	for {
		conn, aerr := e.Listener.Accept()
		if aerr != nil && ctx.Err() == nil && temporary(aerr) {
			if backoff == 0 {
				backoff = 5 * time.Millisecond
				log.Warn("accepting the SPICE client's connections fails for now; pausing until it works again", "err", aerr)
			}
			select {
			case <-time.After(backoff):
			case <-ctx.Done():
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 0
		if aerr != nil {
			if ctx.Err() == nil {
				err = fmt.Errorf("accepting the SPICE client's connections: %w", aerr)
			}
			break
		}
		tc, ok := conn.(*net.TCPConn)
		if !ok {
			_ = conn.Close()
			err = fmt.Errorf("the listener gave a %T; the client end needs TCP connections", conn)
			break
		}
		wg.Go(func() {
			ch, oerr := e.Carrier.Open(ctx)
			if oerr != nil {
				log.Warn("could not carry a client connection", "from", tc.RemoteAddr(), "err", oerr)
				_ = tc.Close()
				return
			}
			r := newRelay(ch.Carrier(), ch.Index(), tc, ch, e.Trace, log, e.Events)
			defer captureTo(r, e.CaptureDir, log)()
			relays.Store(r, nil)
			if ctx.Err() != nil {
				r.closeBoth()
			}
			e.stats.add(r.run())
			relays.Delete(r)
		})
	}
	wg.Wait()
	return err
}

// Serve accepts the carrier's channels until ctx ends or the listener
// closes, and relays each to a new connection to spice-server. A channel
// the listener refused is logged and Serve goes on; a listener whose
// socket failed ends Serve with the reason. It returns once every relay
// has ended; ctx's end closes them. The listener is the caller's to
// close.
func (e *ServerEnd) Serve(ctx context.Context) error {
	log := logger(e.Log)
	warn := newWarner(log)
	var wg sync.WaitGroup
	var relays sync.Map
	stop := context.AfterFunc(ctx, func() {
		relays.Range(func(k, _ any) bool { k.(*relay).closeBoth(); return true })
	})
	defer stop()
	var err error
	for {
		ch, aerr := e.Listener.Accept(ctx)
		if aerr != nil {
			var ce *transport.ChannelError
			switch {
			case ctx.Err() != nil:
			case errors.Is(aerr, transport.ErrCarrierListenerFailed):
				err = fmt.Errorf("accepting carried channels: %w", aerr)
			case errors.Is(aerr, net.ErrClosed):
			case errors.As(aerr, &ce):
				warn.warn("a channel was refused or could not be accepted", "err", aerr)
				continue
			default:
				err = fmt.Errorf("accepting carried channels: %w", aerr)
			}
			break
		}
		wg.Go(func() {
			conn, derr := e.Dial(ctx)
			if derr != nil {
				warn.warn("could not reach spice-server for a carried channel", "carrier", carrierName(ch.Carrier()), "ch", ch.Index(), "err", derr)
				_ = ch.Close()
				return
			}
			tc, ok := conn.(*net.TCPConn)
			if !ok {
				log.Warn("Dial must give a TCP connection", "got", fmt.Sprintf("%T", conn))
				_ = conn.Close()
				_ = ch.Close()
				return
			}
			r := newRelay(ch.Carrier(), ch.Index(), ch, tc, e.Trace, log, e.Events)
			defer captureTo(r, e.CaptureDir, log)()
			relays.Store(r, nil)
			if ctx.Err() != nil {
				r.closeBoth()
			}
			e.stats.add(r.run())
			relays.Delete(r)
		})
	}
	wg.Wait()
	return err
}

func (r *relay) closeBoth() {
	for _, c := range []halfCloser{r.client, r.server} {
		// A write blocked on the peer's flow control is not ended by a
		// QUIC stream's Close; a deadline already past ends it.
		if d, ok := c.(interface{ SetDeadline(time.Time) error }); ok {
			_ = d.SetDeadline(time.Unix(1, 0))
		}
		_ = c.Close()
	}
}

// captureTo opens r's capture files in dir (when dir is set) and returns
// what closes them.
func captureTo(r *relay, dir string, log *slog.Logger) (closeAll func()) {
	if dir == "" {
		return func() {}
	}
	var files []*os.File
	for _, d := range []spiceproto.Direction{spiceproto.ClientToServer, spiceproto.ServerToClient} {
		// O_EXCL: a file of another connection, or of an earlier run, is
		// never overwritten.
		f, err := os.OpenFile(filepath.Join(dir, captureName(r.carrier, r.index, d)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			log.Warn("no capture", "err", err)
			continue
		}
		files = append(files, f)
		r.capture[d] = f
	}
	return func() {
		for _, f := range files {
			_ = f.Close()
		}
	}
}

// captureName is the capture file of one direction of a carrier's channel.
func captureName(carrier uint64, index int, d spiceproto.Direction) string {
	return fmt.Sprintf("%s-ch%d-%v.bin", carrierName(carrier), index, d)
}

// temporary reports whether an accept failed for want of a resource that
// may come back.
func temporary(err error) bool {
	for _, e := range []error{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM, syscall.ECONNABORTED} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// warner logs warnings at a bounded rate: a burst of warnBurst, then one
// a second, each saying how many were left out since the last.
type warner struct {
	log     *slog.Logger
	mu      sync.Mutex
	tokens  float64
	last    time.Time
	skipped int
}

const warnBurst = 10

func newWarner(log *slog.Logger) *warner {
	return &warner{log: log, tokens: warnBurst, last: time.Now()}
}

func (w *warner) warn(msg string, args ...any) {
	now := time.Now()
	w.mu.Lock()
	w.tokens = min(warnBurst, w.tokens+now.Sub(w.last).Seconds())
	w.last = now
	if w.tokens < 1 {
		w.skipped++
		w.mu.Unlock()
		return
	}
	w.tokens--
	skipped := w.skipped
	w.skipped = 0
	w.mu.Unlock()
	if skipped > 0 {
		args = append(args, "not_logged_before_this", skipped)
	}
	w.log.Warn(msg, args...)
}
