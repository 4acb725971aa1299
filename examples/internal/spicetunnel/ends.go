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

	"github.com/shakenfist/quicbench/spicelike/spiceproto"
	"github.com/shakenfist/quicbench/transport"
)

// ClientEnd is the end a SPICE client connects to: every TCP connection it
// accepts (one per SPICE channel) is carried over a new channel of the
// carrier.
type ClientEnd struct {
	// Listener accepts the SPICE client's connections.
	Listener net.Listener
	// Carrier opens a channel per connection, towards the ServerEnd.
	Carrier *transport.Carrier
	// Trace, when set, gets a record per message.
	Trace *Tracer
	// Events, when set, is called for every message (from the relay's
	// goroutines, concurrently; it must not block).
	Events func(Event)
	Log    *slog.Logger
	// CaptureDir, when set, receives every connection's raw bytes, one
	// file per direction: ch<N>-c2s.bin and ch<N>-s2c.bin.
	CaptureDir string

	stats statsList
}

// ServerEnd is the end that reaches spice-server: every channel the
// carrier listener delivers is carried to a new TCP connection made by
// Dial.
type ServerEnd struct {
	Listener *transport.CarrierListener
	// Dial connects to spice-server.
	Dial       func(ctx context.Context) (net.Conn, error)
	Trace      *Tracer
	Events     func(Event)
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
	return append([]ChannelStats(nil), s.all...)
}

// Channels is what every connection relayed so far carried, in the order
// they ended.
func (e *ClientEnd) Channels() []ChannelStats { return e.stats.list() }

// Channels is what every connection relayed so far carried, in the order
// they ended.
func (e *ServerEnd) Channels() []ChannelStats { return e.stats.list() }

func logger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}

// Serve accepts the client's connections until ctx ends or the listener
// fails, and relays each. It returns once every relay has ended; ctx's
// end closes them. The carrier is the caller's to close.
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
	for {
		conn, aerr := e.Listener.Accept()
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
			r := newRelay(ch.Index(), tc, ch, e.Trace, log, e.Events)
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
// closes, and relays each to a new connection to spice-server. It returns
// once every relay has ended; ctx's end closes them. The listener is the
// caller's to close.
func (e *ServerEnd) Serve(ctx context.Context) error {
	log := logger(e.Log)
	var wg sync.WaitGroup
	var relays sync.Map
	stop := context.AfterFunc(ctx, func() {
		relays.Range(func(k, _ any) bool { k.(*relay).closeBoth(); return true })
	})
	defer stop()
	var err error
	for {
		ch, aerr := e.Listener.Accept(ctx)
		var ce *transport.ChannelError
		if errors.As(aerr, &ce) {
			log.Warn("a channel could not be accepted", "err", aerr)
			continue
		}
		if aerr != nil {
			if ctx.Err() == nil && !errors.Is(aerr, net.ErrClosed) {
				err = fmt.Errorf("accepting carried channels: %w", aerr)
			}
			break
		}
		wg.Go(func() {
			conn, derr := e.Dial(ctx)
			if derr != nil {
				log.Warn("could not reach spice-server for a carried channel", "ch", ch.Index(), "err", derr)
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
			r := newRelay(ch.Index(), ch, tc, e.Trace, log, e.Events)
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
	_ = r.client.Close()
	_ = r.server.Close()
}

// captureTo opens r's capture files in dir (when dir is set) and returns
// what closes them.
func captureTo(r *relay, dir string, log *slog.Logger) (closeAll func()) {
	if dir == "" {
		return func() {}
	}
	var files []*os.File
	for _, d := range []spiceproto.Direction{spiceproto.ClientToServer, spiceproto.ServerToClient} {
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("ch%d-%v.bin", r.index, d)))
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
