package spicelike

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// RunServer runs the server end of one session over chans, the session's
// channels in the order of cfg.Channels, connected to a peer running
// RunClient with the same Config. It answers each channel's opening byte
// (due within cfg.Timeout), then echoes interactive requests and writes
// bulk data on the saturating channel until every channel has received
// the client's end marker. A client that goes away first is reported in
// ServerResult.Errors; the returned error is for bad arguments, channels
// that did not open, or ctx ending the run. It gives up, reporting every
// channel still open, after Duration + 3×Timeout from the opening. Like
// RunClient it does not close the channels.
func RunServer[C io.ReadWriter](ctx context.Context, cfg Config, chans []C) (ServerResult, error) {
	return runServer(ctx, cfg, asReadWriters(chans))
}

func runServer(ctx context.Context, cfg Config, chans []io.ReadWriter) (ServerResult, error) {
	if err := checkArgs(cfg, chans); err != nil {
		return ServerResult{}, err
	}
	if cfg.Replay != nil {
		return runReplayServer(ctx, cfg, chans)
	}
	s, res, limit, stop := startServer(ctx, cfg, chans)
	defer stop()

	var wg sync.WaitGroup
	for i := range chans {
		wg.Go(func() { s.serve(i) })
	}
	finished := waitGroupOrStuck(&wg, s.done, cfg.Timeout)
	res.End = time.Now()
	res.Opened = int(s.opened.Load())
	res.Ended = int(s.ended.Load())
	res.BulkBytesWritten = s.written.Load()
	res.Echoes = s.echoes.Load()
	for _, st := range s.states {
		if e := st.collect(); e != nil {
			res.Errors = append(res.Errors, *e)
		}
	}
	if finished && s.heldBack != nil && res.Ended < len(chans)-1 && !s.overdue.Load() && !s.cancelled.Load() {
		res.Errors = append(res.Errors, *s.heldBack)
	}
	if s.overdue.Load() && !s.cancelled.Load() {
		for i, ch := range cfg.Channels {
			if !s.endSeen[i].Load() {
				res.Errors = append(res.Errors, ChannelError{Channel: ch.Name, Role: ch.Role, Phase: "end",
					Err: fmt.Sprintf("the client did not end the run within Duration+3×Timeout (%v)", limit)})
			}
		}
	}
	if !finished {
		res.Errors = append(res.Errors, ChannelError{Channel: "*", Phase: "end",
			Err: "some channel did not stop after the run ended; channels that implement neither SetReadDeadline/SetWriteDeadline nor io.Close cannot be interrupted"})
	}
	if s.cancelled.Load() {
		res.Cancelled = true
		return res, fmt.Errorf("spicelike: server cancelled: %w", context.Cause(ctx))
	}
	if res.Opened < len(chans) {
		return res, fmt.Errorf("spicelike: server could not open the session (%d of %d channels opened): %w", res.Opened, len(chans), res.Err())
	}
	return res, nil
}

// startServer sets up a server run (synthetic or replay) over chans: its
// state per channel, the result's start, and the two ways a run ends
// early, ctx ending (every channel interrupted, errors from then on the
// cancellation's) and the run overrunning limit, Duration + 3×Timeout
// (every channel interrupted, the run finished). stop undoes both.
func startServer(ctx context.Context, cfg Config, chans []io.ReadWriter) (s *server, res ServerResult, limit time.Duration, stop func()) {
	s = &server{cfg: cfg, chans: chans, done: make(chan struct{})}
	res = ServerResult{Channels: append([]Channel(nil), cfg.Channels...), Start: time.Now()}
	s.states = make([]*chanState, len(chans))
	for i := range chans {
		s.states[i] = &chanState{ch: cfg.Channels[i], suppress: &s.cancelled}
	}
	stopCancel := onCancel(ctx, chans, &s.cancelled, s.finish)
	limit = cfg.Duration + 3*cfg.Timeout
	overdue := time.AfterFunc(limit, func() {
		s.overdue.Store(true)
		for _, ch := range chans {
			interruptBoth(ch)
		}
		s.finish()
	})
	return s, res, limit, func() {
		overdue.Stop()
		stopCancel()
	}
}

type server struct {
	cfg     Config
	chans   []io.ReadWriter
	states  []*chanState
	endSeen [maxChannels]atomic.Bool

	doneOnce  sync.Once
	done      chan struct{}
	cancelled atomic.Bool // errors from here on are the cancellation's
	overdue   atomic.Bool

	opened, ended, written, echoes atomic.Int64

	heldBack *ChannelError // the saturating channel's failure, see bulk
}

func (s *server) finish() { s.doneOnce.Do(func() { close(s.done) }) }

// fail records err unless the run has been given up on, in which case the
// error is the interruption's and RunServer reports the cause instead.
func (s *server) fail(i int, phase string, err error) {
	if s.overdue.Load() {
		return
	}
	s.states[i].fail(phase, err)
}

func (s *server) serve(i int) {
	ch := s.chans[i]
	stop := guard(ch, s.cfg.Timeout, interruptBothBool)
	var b [1]byte
	_, err := io.ReadFull(ch, b[:])
	if err == nil && b[0] != opener(i) {
		stop()
		if b[0]&0x80 != 0 && int(b[0]&0x7f) < maxChannels {
			err = fmt.Errorf("got the opening byte of channel %d on channel %d: "+
				"the transport presented the channels in a different order to the client and the server", b[0]&0x7f, i)
		} else {
			err = fmt.Errorf("got %#02x, want the opening byte %#02x: is the peer a spicelike client?", b[0], opener(i))
		}
		s.fail(i, "open", err)
		return
	}
	if err == nil {
		_, err = ch.Write(b[:])
	}
	if !stop() {
		s.fail(i, "open", fmt.Errorf("the client's opening byte did not arrive within %v", s.cfg.Timeout))
		return
	}
	if err != nil {
		s.fail(i, "open", err)
		return
	}
	s.opened.Add(1)
	switch s.cfg.Channels[i].Role {
	case Quiet:
		s.quiet(i)
	case Saturating:
		s.bulk(i)
	case Interactive:
		s.echo(i)
	}
}

// goneErr turns the error of a read that should have returned the end
// marker into one that says what happened.
func goneErr(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return errors.New("the client closed the channel without ending the run")
	}
	return fmt.Errorf("waiting for the client to end the run: %w", err)
}

func (s *server) quiet(i int) {
	ch := s.chans[i]
	var b [1]byte
	if _, err := io.ReadFull(ch, b[:]); err != nil {
		s.fail(i, "run", goneErr(err))
		return
	}
	if b[0] != endByte {
		s.fail(i, "run", fmt.Errorf("quiet channel received %#02x, want only the end byte %#02x", b[0], endByte))
		return
	}
	s.endSeen[i].Store(true)
	s.ended.Add(1)
	_, _ = ch.Write(b[:]) // the client reports it if this does not arrive
}

// bulk writes BulkBufferSize buffers until the client's end byte arrives on
// the channel's other direction, paced to BulkRateCap if that is set.
//
// A client that closes a TCP connection with bulk data still unread makes
// its kernel send a reset, which can reach the server's writer before the
// server's reader has taken the end byte that preceded it. So a failed
// write is not an error by itself: the reader gets Timeout to produce the
// end byte, and if the channel failed without one, the error is held back
// and reported only if the other channels did not all end cleanly (see
// RunServer): a session whose every other channel was ended by the client
// was ended by the client.
func (s *server) bulk(i int) {
	ch := s.chans[i]
	var stopping atomic.Bool
	var writeErr error
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		buf := make([]byte, s.cfg.BulkBufferSize)
		x := byte(0x3c)
		for j := range buf {
			buf[j] = x
			x = x*13 + 7
		}
		p := newPacer(s.cfg.BulkRateCap, s.cfg.BulkBufferSize)
		for !stopping.Load() {
			if !p.wait(s.done) {
				return
			}
			n, err := ch.Write(buf)
			s.written.Add(int64(n))
			p.sent(n)
			if err != nil {
				writeErr = fmt.Errorf("writing bulk data: %w", err)
				return
			}
		}
	}()
	var b [1]byte
	readDone := make(chan error, 1)
	go func() {
		_, err := io.ReadFull(ch, b[:])
		readDone <- err
	}()
	var err error
	select {
	case err = <-readDone:
	case <-writerDone:
		t := time.NewTimer(s.cfg.Timeout)
		select {
		case err = <-readDone:
		case <-t.C:
			interruptRead(ch)
			err = <-readDone
		}
		t.Stop()
	}
	stopping.Store(true)
	// The client has stopped reading: unblock a write that is waiting for
	// room rather than wait for the caller to close the channel.
	interruptWrite(ch)
	<-writerDone
	switch {
	case err == nil && b[0] == endByte:
		s.endSeen[i].Store(true)
		s.ended.Add(1)
	case err == nil:
		s.fail(i, "run", fmt.Errorf("saturating channel received %#02x from the client, want only the end byte %#02x", b[0], endByte))
	case writeErr != nil:
		s.heldBack = &ChannelError{Channel: s.cfg.Channels[i].Name, Role: Saturating, Phase: "run", Err: writeErr.Error()}
	default:
		s.heldBack = &ChannelError{Channel: s.cfg.Channels[i].Name, Role: Saturating, Phase: "run", Err: goneErr(err).Error()}
	}
}

// echo returns every interactive request verbatim until the end message.
// Like the client's round trip it allocates nothing per message.
func (s *server) echo(i int) {
	ch := s.chans[i]
	msg := make([]byte, s.cfg.EchoSize)
	for {
		if _, err := io.ReadFull(ch, msg[:headerSize]); err != nil {
			s.fail(i, "run", goneErr(err))
			return
		}
		kind, err := checkHeader(msg, s.cfg.EchoSize)
		if err != nil {
			s.fail(i, "run", err)
			return
		}
		if _, err := io.ReadFull(ch, msg[headerSize:]); err != nil {
			s.fail(i, "run", goneErr(err))
			return
		}
		if kind == kindEnd {
			s.endSeen[i].Store(true)
			s.ended.Add(1)
			_, _ = ch.Write(msg) // the client reports it if this does not arrive
			return
		}
		if _, err := ch.Write(msg); err != nil {
			s.fail(i, "run", fmt.Errorf("writing an echo: %w", err))
			return
		}
		s.echoes.Add(1)
	}
}

// pacer spaces writes so that payload leaves at rate bits per second. The
// schedule advances by each write's exact share of the rate from the
// previous due time, not from when the write happened, so timer overshoot
// does not accumulate. After a stall (a slow write, a late wake-up) it
// catches up by at most four buffers or 100 ms of the rate, whichever is
// more, like a token bucket of that depth; beyond that the schedule
// restarts from now rather than bursting.
type pacer struct {
	rate   float64 // bits per second; 0 = unpaced
	slack  time.Duration
	next   time.Time
	timer  *time.Timer
	primed bool
}

func newPacer(rate int64, buf int) *pacer {
	p := &pacer{rate: float64(rate)}
	if rate > 0 {
		p.slack = max(time.Duration(4*float64(buf)*8/p.rate*float64(time.Second)), 100*time.Millisecond)
		p.timer = time.NewTimer(time.Hour)
		p.timer.Stop()
	}
	return p
}

// wait blocks until the next write is due. It returns false if done closes
// first.
func (p *pacer) wait(done <-chan struct{}) bool {
	if p.rate == 0 {
		return true
	}
	now := time.Now()
	if !p.primed || now.Sub(p.next) > p.slack {
		p.next, p.primed = now, true
		return true
	}
	if d := p.next.Sub(now); d > 0 {
		p.timer.Reset(d)
		select {
		case <-p.timer.C:
		case <-done:
			return false
		}
	}
	return true
}

func (p *pacer) sent(n int) {
	if p.rate > 0 {
		p.next = p.next.Add(time.Duration(float64(n) * 8 / p.rate * float64(time.Second)))
	}
}
