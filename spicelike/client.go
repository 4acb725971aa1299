package spicelike

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// RunClient runs the client end of one session over chans: the session's
// channels in the order of cfg.Channels, connected to a peer running
// RunServer with the same Config. Any io.ReadWriters will do; a channel
// with SetReadDeadline and SetWriteDeadline, or io.Closer, can be
// interrupted when the run is cancelled or times out. It opens every
// channel, runs for cfg.Duration, closes the run with the peer and returns
// what it measured; it does not close the channels.
//
// An error on a channel (a corrupted echo, the server going away, data on
// a quiet channel) is in ClientResult.Errors and Err, and ends the run
// early (ClientResult.End says when); a timeout is a measurement, not an
// error. The returned error is for a run that could not be made (bad
// arguments, a channel that did not open) or that ctx ended; the result
// then holds whatever was measured.
func RunClient[C io.ReadWriter](ctx context.Context, cfg Config, chans []C) (ClientResult, error) {
	return runClient(ctx, cfg, asReadWriters(chans))
}

func runClient(ctx context.Context, cfg Config, chans []io.ReadWriter) (ClientResult, error) {
	if err := checkArgs(cfg, chans); err != nil {
		return ClientResult{}, err
	}
	if cfg.Replay != nil {
		return runReplayClient(ctx, cfg, chans)
	}
	return runRoles(ctx, cfg, chans)
}

// newClient sets up a client run (of the roles or a replay) over chans:
// its state per channel, and ctx's end interrupting every channel (errors
// from then on are the cancellation's) until stop is called.
func newClient(ctx context.Context, cfg Config, chans []io.ReadWriter) (c *client, stop func() bool) {
	c = &client{cfg: cfg, chans: chans, done: make(chan struct{})}
	c.states = make([]*chanState, len(chans))
	for i := range chans {
		c.states[i] = &chanState{ch: cfg.Channels[i], suppress: &c.cancelled}
	}
	return c, onCancel(ctx, chans, &c.cancelled, c.finish)
}

// openAll runs the opening exchange, one byte each way on every channel,
// all at once, and returns when the session started, how long the
// opening took and the channels' errors from it.
func (c *client) openAll() (start time.Time, took time.Duration, errs []ChannelError) {
	openStart := time.Now()
	var wg sync.WaitGroup
	for i := range c.chans {
		wg.Go(func() { c.open(i) })
	}
	wg.Wait()
	start = time.Now()
	for _, s := range c.states {
		if e := s.collect(); e != nil {
			errs = append(errs, *e)
		}
	}
	return start, start.Sub(openStart), errs
}

// runRoles is the client of a run of the roles (not a replay), with cfg
// and chans checked.
func runRoles(ctx context.Context, cfg Config, chans []io.ReadWriter) (ClientResult, error) {
	c, stopCancel := newClient(ctx, cfg, chans)
	defer stopCancel()
	res := ClientResult{
		Channels:       append([]Channel(nil), cfg.Channels...),
		Duration:       cfg.Duration,
		Warmup:         cfg.Warmup,
		EchoSize:       cfg.EchoSize,
		EchoGap:        cfg.EchoGap,
		Timeout:        cfg.Timeout,
		BulkBufferSize: cfg.BulkBufferSize,
		BulkRateCap:    cfg.BulkRateCap,
	}
	res.Start, res.OpenTime, res.Errors = c.openAll()
	if c.cancelled.Load() {
		res.Cancelled = true
		res.End = res.Start
		return res, fmt.Errorf("spicelike: client cancelled while opening channels: %w", context.Cause(ctx))
	}
	if len(res.Errors) > 0 {
		res.End = res.Start
		return res, fmt.Errorf("spicelike: client could not open the session: %w", res.Err())
	}
	for _, s := range c.states {
		s.shut = false
	}

	c.start = res.Start
	c.end = res.Start.Add(cfg.Duration)
	c.warmEnd = res.Start.Add(cfg.Warmup)
	endTimer := time.AfterFunc(cfg.Duration, c.finish)
	defer endTimer.Stop()

	var wg sync.WaitGroup
	for i, ch := range cfg.Channels {
		switch ch.Role {
		case Quiet:
			wg.Go(func() { c.quiet(i) })
		case Saturating:
			c.bulkCount = &bulkCounters{}
			wg.Go(func() { c.bulk(i) })
		case Interactive:
			c.echo = newEchoClient(c, i)
			wg.Go(c.echo.run)
		}
	}
	// Every step after the end is bounded by Timeout; allow for the
	// longest chain (an in-flight round trip, then the closing exchange).
	finished := waitGroupOrStuck(&wg, c.done, 2*cfg.Timeout+time.Second)

	res.End = c.end
	select {
	case <-c.done: // orders the write of stoppedAt before the read
		if c.stoppedAt.Before(c.end) {
			res.End = c.stoppedAt // cancelled, or stopped by a channel error
		}
	default:
	}
	res.Cancelled = c.cancelled.Load()
	for _, s := range c.states {
		if e := s.collect(); e != nil {
			res.Errors = append(res.Errors, *e)
		}
	}
	if !finished {
		res.Errors = append(res.Errors, ChannelError{Channel: "*", Phase: "end",
			Err: "some channel did not stop within 2×Timeout after the run ended; " +
				"channels that implement neither SetReadDeadline/SetWriteDeadline nor io.Close cannot be interrupted"})
	}
	if c.echo != nil {
		c.echo.collect(&res)
	}
	c.collectBulk(&res)
	if res.Cancelled {
		return res, fmt.Errorf("spicelike: client run cancelled after %v: %w", res.End.Sub(res.Start).Round(time.Millisecond), context.Cause(ctx))
	}
	return res, nil
}

type client struct {
	cfg    Config
	chans  []io.ReadWriter
	states []*chanState

	start, end, warmEnd time.Time

	doneOnce  sync.Once
	done      chan struct{} // closed at the end of the run, on cancel or on a channel error
	cancelled atomic.Bool
	stoppedAt time.Time // written before done is closed

	echo      *echoClient
	bulkCount *bulkCounters
}

func (c *client) finish() {
	c.doneOnce.Do(func() {
		c.stoppedAt = time.Now()
		close(c.done)
	})
}

func (c *client) isDone() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

func (c *client) open(i int) {
	ch, s := c.chans[i], c.states[i]
	stop := guard(ch, c.cfg.Timeout, interruptBothBool)
	b := [1]byte{opener(i)}
	if _, err := ch.Write(b[:]); err != nil {
		stop()
		s.fail("open", fmt.Errorf("writing the opening byte: %w", err))
		return
	}
	_, err := io.ReadFull(ch, b[:])
	if !stop() {
		s.fail("open", fmt.Errorf("no answer to the opening byte within %v", c.cfg.Timeout))
		return
	}
	if err != nil {
		s.fail("open", fmt.Errorf("reading the answer to the opening byte: %w", err))
		return
	}
	if b[0] != opener(i) {
		s.fail("open", fmt.Errorf("server answered the opening byte with %#02x, want %#02x: is the peer a spicelike server with the same channels?", b[0], opener(i)))
	}
}

// quiet watches the channel during the run (anything arriving, or the
// server going away, is an error that ends the run) and at the end closes
// it with the server: end byte out, end byte back.
func (c *client) quiet(i int) {
	ch, s := c.chans[i], c.states[i]
	var b [1]byte
	got := make(chan error, 1)
	go func() {
		_, err := io.ReadFull(ch, b[:])
		got <- err
	}()
	select {
	case err := <-got:
		if err == nil {
			err = fmt.Errorf("server sent %#02x on a quiet channel during the run", b[0])
		} else {
			err = fmt.Errorf("server went away during the run: %w", err)
		}
		s.fail("run", err)
		c.finish()
		return
	case <-c.done:
	}
	if c.cancelled.Load() {
		return
	}
	stop := guard(ch, c.cfg.Timeout, interruptBothBool)
	_, err := ch.Write([]byte{endByte})
	if err == nil {
		err = <-got
	}
	switch {
	case !stop():
		s.fail("end", fmt.Errorf("server did not answer the end byte within %v", c.cfg.Timeout))
	case err != nil:
		s.fail("end", fmt.Errorf("closing the run: %w", err))
	case b[0] != endByte:
		s.fail("end", fmt.Errorf("server answered the end byte with %#02x (the channel carried data while it should have been quiet)", b[0]))
	}
}

// echoClient is the interactive channel's client. Its round trip
// (roundTrip) allocates nothing: buffers and the sample slice are made up
// front, the timeout is a watchdog goroutine watching an atomic deadline.
type echoClient struct {
	c     *client
	i     int
	ch    io.ReadWriter
	s     *chanState
	size  int
	req   []byte
	resp  []byte
	start time.Time

	// deadline is the armed timeout in nanoseconds since start, 0 when no
	// request is outstanding, -1 once the watchdog has fired.
	deadline atomic.Int64
	wdStop   chan struct{}

	mu       sync.Mutex // guards the fields below against collect
	samples  []Sample
	timeouts []time.Duration
	closed   bool
}

func newEchoClient(c *client, i int) *echoClient {
	// Room for every round trip the run can hold (each takes at least
	// EchoGap), up to 1M samples (16 MiB); past that, or with no gap, the
	// slice grows, which allocates on the rare round trips that grow it.
	n := 1 << 20
	if c.cfg.EchoGap > 0 {
		n = min(n, int(c.cfg.Duration/c.cfg.EchoGap)+16)
	}
	return &echoClient{
		c: c, i: i, ch: c.chans[i], s: c.states[i], size: c.cfg.EchoSize,
		req: make([]byte, c.cfg.EchoSize), resp: make([]byte, c.cfg.EchoSize),
		start: c.start, samples: make([]Sample, 0, n), wdStop: make(chan struct{}),
	}
}

// outcome of one round trip
type outcome int

const (
	rtOK outcome = iota
	rtTimeout
	rtError
)

// roundTrip sends request seq, waits for its echo and records the sample.
// It allocates nothing on the success path.
func (e *echoClient) roundTrip(seq uint64) (outcome, error) {
	fillMessage(e.req, kindRequest, seq)
	t0 := time.Now()
	off := t0.Sub(e.start)
	d := int64(off + e.c.cfg.Timeout)
	e.deadline.Store(d)
	_, err := e.ch.Write(e.req)
	if err == nil {
		_, err = io.ReadFull(e.ch, e.resp)
	}
	rtt := time.Since(t0)
	if !e.deadline.CompareAndSwap(d, 0) || rtt > e.c.cfg.Timeout {
		// The watchdog fired (and recorded the timeout) or the echo came
		// back too late.
		e.recordTimeout(off)
		return rtTimeout, nil
	}
	if err != nil {
		return rtError, err
	}
	if !bytes.Equal(e.req, e.resp) {
		return rtError, describeMismatch(e.req, e.resp)
	}
	e.mu.Lock()
	if !e.closed {
		e.samples = append(e.samples, Sample{Offset: off, RTT: rtt})
	}
	e.mu.Unlock()
	return rtOK, nil
}

func (e *echoClient) recordTimeout(off time.Duration) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed || len(e.timeouts) > 0 {
		return
	}
	e.timeouts = append(e.timeouts, off)
}

// watchdog interrupts the channel's read when an armed deadline passes. It
// wakes at most once per Timeout while requests complete in time, so it
// costs nothing per round trip.
func (e *echoClient) watchdog() {
	timeout := e.c.cfg.Timeout
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		select {
		case <-e.wdStop:
			return
		case <-t.C:
		}
		d := e.deadline.Load()
		now := int64(time.Since(e.start))
		if d > 0 && now >= d && e.deadline.CompareAndSwap(d, -1) {
			e.recordTimeout(time.Duration(d) - timeout)
			interruptRead(e.ch)
			return
		}
		wait := timeout
		if d > 0 && d > now {
			wait = time.Duration(d - now)
		}
		t.Reset(wait)
	}
}

func (e *echoClient) run() {
	go e.watchdog()
	defer close(e.wdStop)
	gap := time.NewTimer(time.Hour)
	gap.Stop()
	var seq uint64
	healthy := true
	for !e.c.isDone() && time.Now().Before(e.c.end) {
		seq++
		out, err := e.roundTrip(seq)
		if out == rtError {
			e.s.fail("run", err)
			e.c.finish() // the interactive channel is out of step: stop the run
			healthy = false
			break
		}
		if out == rtTimeout {
			healthy = false
			break
		}
		if e.c.cfg.EchoGap > 0 {
			gap.Reset(e.c.cfg.EchoGap)
			select {
			case <-gap.C:
			case <-e.c.done:
			}
		}
	}
	if !e.c.isDone() {
		<-e.c.done // a timeout or error ended the measurement early
	}
	if e.c.cancelled.Load() {
		return
	}
	// Close the run with the server: an end message, echoed back if the
	// channel is still in step.
	seq++
	fillMessage(e.req, kindEnd, seq)
	if !healthy {
		stop := guard(e.ch, e.c.cfg.Timeout, interruptWrite)
		_, _ = e.ch.Write(e.req) // best effort: the channel is already reported
		stop()
		return
	}
	stop := guard(e.ch, e.c.cfg.Timeout, interruptBothBool)
	_, err := e.ch.Write(e.req)
	if err == nil {
		_, err = io.ReadFull(e.ch, e.resp)
	}
	switch {
	case !stop():
		e.s.fail("end", fmt.Errorf("server did not echo the end message within %v", e.c.cfg.Timeout))
	case err != nil:
		e.s.fail("end", fmt.Errorf("closing the run: %w", err))
	case !bytes.Equal(e.req, e.resp):
		e.s.fail("end", describeMismatch(e.req, e.resp))
	}
}

func (e *echoClient) collect(res *ClientResult) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	res.Samples = e.samples
	res.Timeouts = len(e.timeouts)
	res.TimeoutOffsets = e.timeouts
}
