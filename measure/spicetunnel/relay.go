package spicetunnel

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shakenfist/quicbench/spicelike/spiceproto"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// Event is one message as an end of the tunnel saw it pass.
type Event struct {
	// Channel is the tunnel's index of the connection (the carrier's).
	Channel int
	// Carrier is the carrier's id (transport.CarrierChannel).
	Carrier uint64
	// Type and ID are the SPICE channel's, once its link message has
	// passed (Known).
	Type  spiceproto.ChannelType
	ID    uint8
	Known bool
	// At is when the message's last byte was read.
	At  time.Time
	Msg spiceproto.Msg
}

// ChannelStats is what one relayed connection carried.
type ChannelStats struct {
	Channel int `json:"ch"`
	// Carrier is the carrier's id, as the trace writes it.
	Carrier     string `json:"carrier"`
	ChannelType string `json:"chtype,omitempty"`
	ChannelID   int    `json:"chid"`
	BytesC2S    int64  `json:"bytes_c2s"`
	BytesS2C    int64  `json:"bytes_s2c"`
	MessagesC2S int64  `json:"messages_c2s"`
	MessagesS2C int64  `json:"messages_s2c"`
	// ParseError is why the parser stopped following the connection, if it
	// did (the bytes went on passing unchanged).
	ParseError string `json:"parse_error,omitempty"`
	// Error is how the connection ended, when not cleanly.
	Error string `json:"error,omitempty"`
}

// halfCloser is a connection whose sending side can end alone (TCP's FIN,
// a QUIC stream's FIN).
type halfCloser interface {
	io.ReadWriteCloser
	CloseWrite() error
}

// relay carries one SPICE connection: bytes read from client are the
// client's (c2s) and go to server, bytes read from server go to client.
// Each read is forwarded first and parsed afterwards, so following the
// protocol adds nothing to the bytes' path but the read itself; the
// messages it completes are timed at the read. When one side ends its
// sending, the other side's sending is ended after the bytes already
// read (half-close passes through); when both directions are done, or
// either fails, both connections are closed.
type relay struct {
	index   int
	carrier uint64
	client  halfCloser
	server  halfCloser
	conn    *spiceproto.Conn
	trace   *Tracer
	log     *slog.Logger
	events  func(Event)
	// capture, when set, gets each direction's raw bytes.
	capture [2]io.Writer

	bytes    [2]atomic.Int64
	messages [2]atomic.Int64
	// wrote is each direction's time spent in writes onward so far.
	wrote    [2]time.Duration
	parseMu  sync.Mutex
	parseErr error
}

func newRelay(carrier uint64, index int, client, server halfCloser, trace *Tracer, log *slog.Logger, events func(Event)) *relay {
	return &relay{carrier: carrier, index: index, client: client, server: server, conn: spiceproto.NewConn(), trace: trace, log: log, events: events}
}

// carrierName is how traces, stats and capture files name a carrier.
func carrierName(id uint64) string { return fmt.Sprintf("%016x", id) }

// run relays until both directions are done and returns what passed.
func (r *relay) run() ChannelStats {
	errs := make(chan error, 2)
	go func() { errs <- r.copy(spiceproto.ClientToServer, r.client, r.server) }()
	go func() { errs <- r.copy(spiceproto.ServerToClient, r.server, r.client) }()
	var failed error
	for range 2 {
		if err := <-errs; err != nil && failed == nil {
			failed = err
			// One direction failed: end the other at once.
			r.closeBoth()
		}
	}
	_ = r.client.Close()
	_ = r.server.Close()
	st := ChannelStats{
		Channel:     r.index,
		Carrier:     carrierName(r.carrier),
		BytesC2S:    r.bytes[spiceproto.ClientToServer].Load(),
		BytesS2C:    r.bytes[spiceproto.ServerToClient].Load(),
		MessagesC2S: r.messages[spiceproto.ClientToServer].Load(),
		MessagesS2C: r.messages[spiceproto.ServerToClient].Load(),
	}
	if t, id, ok := r.conn.Channel(); ok {
		st.ChannelType, st.ChannelID = t.String(), int(id)
	}
	if r.parseErr != nil {
		st.ParseError = r.parseErr.Error()
	}
	if failed != nil {
		st.Error = failed.Error()
	}
	return st
}

// copy moves one direction's bytes and follows them.
func (r *relay) copy(dir spiceproto.Direction, from io.Reader, to halfCloser) error {
	buf := make([]byte, 64<<10)
	for {
		n, err := from.Read(buf)
		at := time.Now()
		if n > 0 {
			waited := r.wrote[dir]
			if _, werr := to.Write(buf[:n]); werr != nil {
				return fmt.Errorf("%v: writing: %w", dir, werr)
			}
			r.wrote[dir] += time.Since(at)
			r.bytes[dir].Add(int64(n))
			if w := r.capture[dir]; w != nil {
				_, _ = w.Write(buf[:n])
			}
			r.follow(dir, buf[:n], at, waited)
		}
		if errors.Is(err, io.EOF) {
			if cerr := to.CloseWrite(); cerr != nil && !errors.Is(cerr, net.ErrClosed) {
				return fmt.Errorf("%v: passing the end on: %w", dir, cerr)
			}
			return nil
		}
		if err != nil {
			return fmt.Errorf("%v: reading: %w", dir, err)
		}
	}
}

// follow feeds bytes to the parser and reports the messages they
// complete, read at at after waited in this direction's earlier writes.
// A connection the parser cannot follow is logged once and no longer
// parsed.
func (r *relay) follow(dir spiceproto.Direction, b []byte, at time.Time, waited time.Duration) {
	r.parseMu.Lock()
	stopped := r.parseErr != nil
	r.parseMu.Unlock()
	if stopped {
		return
	}
	ms, err := r.conn.Feed(dir, b)
	if err != nil {
		r.parseMu.Lock()
		if r.parseErr == nil {
			r.parseErr = err
			r.log.Warn("no longer following the connection's messages; its bytes still pass", "carrier", carrierName(r.carrier), "ch", r.index, "err", err)
		}
		r.parseMu.Unlock()
	}
	if len(ms) == 0 {
		return
	}
	typ, id, known := r.conn.Channel()
	for _, m := range ms {
		r.messages[m.Dir].Add(1)
		r.trace.record(r.carrier, r.index, typ, id, known, m, at, waited)
		if r.events != nil {
			r.events(Event{Channel: r.index, Carrier: r.carrier, Type: typ, ID: id, Known: known, At: at, Msg: m})
		}
	}
}

// Tracer writes a trace of every message an end of the tunnel relays. A
// nil *Tracer writes nothing.
type Tracer struct {
	w     *spicetrace.Writer
	start time.Time
	mu    sync.Mutex
	err   error
}

// NewTracer starts a trace on w for the given side (spicetrace.SideClient
// or SideServer), with t = 0 now.
func NewTracer(w io.Writer, side, note string) (*Tracer, error) {
	start := time.Now()
	tw, err := spicetrace.NewWriter(w, spicetrace.Header{Side: side, Started: start, Note: note})
	if err != nil {
		return nil, err
	}
	return &Tracer{w: tw, start: start}, nil
}

// Start is the wall-clock time of the trace's t = 0.
func (t *Tracer) Start() time.Time { return t.start }

// Record converts a parsed message into a trace record.
func Record(start time.Time, ch int, typ spiceproto.ChannelType, id uint8, known bool, m spiceproto.Msg, at time.Time) spicetrace.Record {
	rec := spicetrace.Record{T: max(0, at.Sub(start)), Dir: spicetrace.Direction(m.Dir.String()), Channel: ch,
		Stage: m.Stage, Type: int(m.Type), Name: m.Name, Size: m.Size}
	if known {
		rec.ChannelType, rec.ChannelID = typ.String(), int(id)
	}
	if d := m.Draw; d != nil {
		rec.Draw = &spicetrace.Draw{Surface: d.Surface, Primary: d.Primary, Stream: d.Stream,
			Box: spicetrace.Rect{Top: d.Box.Top, Left: d.Box.Left, Bottom: d.Box.Bottom, Right: d.Box.Right}}
	}
	if k := m.Key; k != nil {
		rec.Key = &spicetrace.Key{Code: k.Code, Down: k.Down}
	}
	return rec
}

func (t *Tracer) record(carrier uint64, ch int, typ spiceproto.ChannelType, id uint8, known bool, m spiceproto.Msg, at time.Time, waited time.Duration) {
	if t == nil {
		return
	}
	rec := Record(t.start, ch, typ, id, known, m, at)
	rec.Carrier = carrierName(carrier)
	rec.WriteWait = waited
	if err := t.w.Write(rec); err != nil {
		t.mu.Lock()
		if t.err == nil {
			t.err = err
		}
		t.mu.Unlock()
	}
}

// Flush writes out what is buffered and returns the first error the
// trace met.
func (t *Tracer) Flush() error {
	if t == nil {
		return nil
	}
	err := t.w.Flush()
	t.mu.Lock()
	defer t.mu.Unlock()
	return errors.Join(t.err, err)
}
