package spicelike

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// The replay's exchange on the wire: the usual opening byte on every
// channel, then frames (replayFrameHeader) both ways, each direction
// playing its recorded messages, until the client ends the run with an
// end frame on every channel; the server answers each with an end frame
// once its own sending on that channel has stopped, and the client reads
// until it has every answer.

// splitReplay returns channel i's messages the client sends (toServer) and
// the server's scheduled ones (toClient, echoes left out).
func splitReplay(r *Replay, i int) (toServer, toClient []ReplayMessage) {
	for _, m := range r.Channels[i].Messages {
		switch {
		case m.Kind == KindEcho:
		case m.ToClient:
			toClient = append(toClient, m)
		default:
			toServer = append(toServer, m)
		}
	}
	return toServer, toClient
}

// readFrames reads frames from ch until an end frame (then it returns nil)
// or an error, calling got for each other frame.
func readFrames(ch io.Reader, got func(kind byte, key uint32, size int)) error {
	hdr := make([]byte, replayFrameHeader)
	skip := make([]byte, 64<<10)
	for {
		if _, err := io.ReadFull(ch, hdr); err != nil {
			return err
		}
		kind, size, key := hdr[0], int(binary.BigEndian.Uint32(hdr[1:5])), binary.BigEndian.Uint32(hdr[5:9])
		switch {
		case kind != frameData && kind != frameKey && kind != frameEcho && kind != frameEnd:
			return fmt.Errorf("replay frame of kind %#02x: is the peer a spicelike replay of the same version?", kind)
		case size < replayFrameHeader || size > maxReplayMessage:
			return fmt.Errorf("replay frame says %d bytes: want %d to %d", size, replayFrameHeader, maxReplayMessage)
		}
		for left := size - replayFrameHeader; left > 0; {
			n, err := ch.Read(skip[:min(left, len(skip))])
			left -= n
			if err != nil && left > 0 {
				return fmt.Errorf("reading a %d-byte frame: %w", size, err)
			}
		}
		if kind == frameEnd {
			return nil
		}
		got(kind, key, size)
	}
}

// keyBook is the client's record of every key it sent and every echo it
// got back.
type keyBook struct {
	mu       sync.Mutex
	start    time.Time
	timeout  time.Duration
	hasEcho  []bool // per key of the span
	keys     int
	sent     map[int]time.Time
	answered map[int]bool
	samples  []Sample
	timeouts []time.Duration
}

func (k *keyBook) keySent(key int, at time.Time) {
	k.mu.Lock()
	k.sent[key] = at
	k.mu.Unlock()
}

func (k *keyBook) echoed(key int, at time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	t, ok := k.sent[key]
	if !ok || k.answered[key] {
		return
	}
	k.answered[key] = true
	if rtt := at.Sub(t); rtt <= k.timeout {
		k.samples = append(k.samples, Sample{Offset: t.Sub(k.start), RTT: rtt})
	} else {
		k.timeouts = append(k.timeouts, t.Sub(k.start))
	}
}

// unanswered counts, as timeouts, the keys with an echo that was not back
// within timeout of being sent, by end.
func (k *keyBook) close(end time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for key, t := range k.sent {
		if !k.answered[key] && k.hasEcho[key%k.keys] && end.Sub(t) > k.timeout {
			k.timeouts = append(k.timeouts, t.Sub(k.start))
		}
	}
}

func runReplayClient(ctx context.Context, cfg Config, chans []io.ReadWriter) (ClientResult, error) {
	c, stopCancel := newClient(ctx, cfg, chans)
	defer stopCancel()
	res := ClientResult{Channels: append([]Channel(nil), cfg.Channels...), Duration: cfg.Duration, Warmup: cfg.Warmup, Timeout: cfg.Timeout}
	res.Start, res.OpenTime, res.Errors = c.openAll()
	if c.cancelled.Load() || len(res.Errors) > 0 {
		res.End, res.Cancelled = res.Start, c.cancelled.Load()
		return res, fmt.Errorf("spicelike: replay client could not open the session: %w", errors.Join(res.Err(), context.Cause(ctx)))
	}
	for _, s := range c.states {
		s.shut = false
	}
	book := c.playReplay(res.Start, &res)
	res.End = res.Start.Add(cfg.Duration)
	if c.stoppedAt.Before(res.End) {
		res.End = c.stoppedAt
	}
	book.close(res.End)
	res.Samples, res.TimeoutOffsets = book.samples, book.timeouts
	res.Timeouts = len(book.timeouts)
	res.Cancelled = c.cancelled.Load()
	for _, s := range c.states {
		if e := s.collect(); e != nil {
			res.Errors = append(res.Errors, *e)
		}
	}
	if res.End.After(res.Start.Add(cfg.Warmup)) {
		res.BulkWindow = res.End.Sub(res.Start.Add(cfg.Warmup))
		res.BulkMbps = float64(res.BulkBytesWindow) * 8 / res.BulkWindow.Seconds() / 1e6
	}
	if res.Cancelled {
		return res, fmt.Errorf("spicelike: replay client cancelled: %w", context.Cause(ctx))
	}
	return res, nil
}

// playReplay runs the client's half: a sender and a reader per channel,
// until Duration, then the end frames both ways. The server's bytes are
// counted into res like a saturating channel's.
func (c *client) playReplay(start time.Time, res *ClientResult) *keyBook {
	r := c.cfg.Replay
	book := &keyBook{start: start, timeout: c.cfg.Timeout, keys: max(r.Keys, 1), hasEcho: make([]bool, max(r.Keys, 1)),
		sent: map[int]time.Time{}, answered: map[int]bool{}}
	for _, ch := range r.Channels {
		for _, m := range ch.Messages {
			if m.Kind == KindEcho {
				book.hasEcho[m.Key] = true
			}
		}
	}
	end := start.Add(c.cfg.Duration)
	warmEnd := start.Add(c.cfg.Warmup)
	endTimer := time.AfterFunc(c.cfg.Duration, c.finish)
	defer endTimer.Stop()
	var total, window atomic.Int64
	var stats ReplayStats
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, ch := range c.chans {
		toServer, _ := splitReplay(r, i)
		s := newSender(ch, start, r, toServer)
		s.onKey = book.keySent
		wg.Go(func() {
			if err := s.run(c.done); err != nil {
				c.states[i].fail("run", fmt.Errorf("sending: %w", err))
				c.finish()
			}
			mu.Lock()
			stats.add(s.stats)
			mu.Unlock()
		})
		wg.Go(func() {
			err := readFrames(ch, func(kind byte, key uint32, size int) {
				now := time.Now()
				if now.Before(end) {
					total.Add(int64(size))
					if !now.Before(warmEnd) {
						window.Add(int64(size))
					}
				}
				if kind == frameEcho {
					book.echoed(int(key), now)
				}
			})
			if err != nil {
				c.states[i].fail("run", fmt.Errorf("the server's frames: %w", goneErr(err)))
				c.finish()
			}
		})
	}
	// After the end, the answers to the end frames must come within
	// Timeout; a channel whose answer does not is interrupted.
	go func() {
		<-c.done
		t := time.NewTimer(c.cfg.Timeout)
		defer t.Stop()
		all := make(chan struct{})
		go func() { wg.Wait(); close(all) }()
		select {
		case <-all:
		case <-t.C:
			for _, ch := range c.chans {
				interruptRead(ch)
			}
		}
	}()
	wg.Wait()
	res.BulkBytesTotal, res.BulkBytesWindow = total.Load(), window.Load()
	res.Replay = &stats
	return book
}

func runReplayServer(ctx context.Context, cfg Config, chans []io.ReadWriter) (ServerResult, error) {
	s, res, limit, stop := startServer(ctx, cfg, chans)
	defer stop()
	var wg sync.WaitGroup
	for i := range chans {
		wg.Go(func() { s.answerOpener(i) })
	}
	wg.Wait()
	res.Opened = int(s.opened.Load())
	if res.Opened == len(chans) {
		res.Replay = s.playReplay(time.Now())
	}
	res.End = time.Now()
	res.Ended = int(s.ended.Load())
	for _, st := range s.states {
		if e := st.collect(); e != nil {
			res.Errors = append(res.Errors, *e)
		}
	}
	if s.overdue.Load() && !s.cancelled.Load() {
		res.Errors = append(res.Errors, ChannelError{Channel: "*", Phase: "end",
			Err: fmt.Sprintf("the client did not end the replay within Duration+3×Timeout (%v)", limit)})
	}
	if s.cancelled.Load() {
		res.Cancelled = true
		return res, fmt.Errorf("spicelike: replay server cancelled: %w", context.Cause(ctx))
	}
	if res.Opened < len(chans) {
		return res, fmt.Errorf("spicelike: replay server could not open the session (%d of %d channels opened): %w", res.Opened, len(chans), res.Err())
	}
	return res, nil
}

// answerOpener is the opening exchange of channel i, server side.
func (s *server) answerOpener(i int) {
	ch := s.chans[i]
	stop := guard(ch, s.cfg.Timeout, interruptBothBool)
	var b [1]byte
	_, err := io.ReadFull(ch, b[:])
	if err == nil && b[0] != opener(i) {
		err = fmt.Errorf("got %#02x, want the opening byte %#02x: the transport presented the channels in another order, or the peer is not a spicelike client", b[0], opener(i))
	}
	if err == nil {
		_, err = ch.Write(b[:])
	}
	if !stop() {
		err = fmt.Errorf("the client's opening byte did not arrive within %v", s.cfg.Timeout)
	}
	if err != nil {
		s.fail(i, "open", err)
		return
	}
	s.opened.Add(1)
}

// echoSpec is one echo of a key: on which channel, how big, how long
// after the key's arrival.
type echoSpec struct {
	ch, size int
	at       time.Duration
}

// playReplay runs the server's half: a sender per channel (its scheduled
// messages, and the echoes of keys as they arrive on any channel) and a
// reader per channel, each channel until the client's end frame.
func (s *server) playReplay(start time.Time) *ReplayStats {
	r := s.cfg.Replay
	echoes := make([][]echoSpec, max(r.Keys, 1))
	for i, ch := range r.Channels {
		for _, m := range ch.Messages {
			if m.Kind == KindEcho {
				echoes[m.Key] = append(echoes[m.Key], echoSpec{ch: i, size: m.Size, at: m.At})
			}
		}
	}
	senders := make([]*sender, len(s.chans))
	for i, ch := range s.chans {
		_, toClient := splitReplay(r, i)
		senders[i] = newSender(ch, start, r, toClient)
	}
	var stats ReplayStats
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, ch := range s.chans {
		stop := make(chan struct{})
		var once sync.Once
		end := func() { once.Do(func() { close(stop) }) }
		wg.Go(func() {
			defer end()
			err := readFrames(ch, func(kind byte, key uint32, _ int) {
				if kind != frameKey {
					return
				}
				now := time.Now()
				for _, e := range echoes[int(key)%len(echoes)] {
					senders[e.ch].echo(outFrame{due: now.Add(e.at), size: e.size, kind: frameEcho, key: key})
				}
			})
			if err != nil {
				s.fail(i, "run", goneErr(err))
				return
			}
			s.endSeen[i].Store(true)
			s.ended.Add(1)
		})
		wg.Go(func() {
			// Stop on the client's end frame, or when the run is given up.
			done := make(chan struct{})
			go func() {
				select {
				case <-stop:
				case <-s.done:
				}
				close(done)
			}()
			if err := senders[i].run(done); err != nil && !s.endSeen[i].Load() {
				s.fail(i, "run", fmt.Errorf("sending: %w", err))
			}
			mu.Lock()
			stats.add(senders[i].stats)
			mu.Unlock()
		})
	}
	wg.Wait()
	return &stats
}
