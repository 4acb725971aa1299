package spicelike

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

// checkSamples checks what every healthy run's samples must satisfy.
func checkSamples(t *testing.T, r ClientResult) {
	t.Helper()
	if len(r.Samples) == 0 {
		t.Fatal("no samples")
	}
	prev := time.Duration(-1)
	for i, s := range r.Samples {
		if s.Offset <= prev {
			t.Fatalf("sample %d offset %v not after previous %v", i, s.Offset, prev)
		}
		if s.Offset < 0 || s.Offset >= r.Duration {
			t.Fatalf("sample %d offset %v outside the run [0, %v)", i, s.Offset, r.Duration)
		}
		if s.RTT <= 0 || s.RTT > r.Timeout {
			t.Fatalf("sample %d RTT %v not in (0, %v]", i, s.RTT, r.Timeout)
		}
		if i > 0 && s.Offset-prev < r.EchoGap {
			t.Fatalf("sample %d started %v after the previous one, less than the gap %v", i, s.Offset-prev, r.EchoGap)
		}
		prev = s.Offset
	}
}

func TestRunOverPipe(t *testing.T) {
	cfg := shortConfig(600*time.Millisecond, 200*time.Millisecond)
	cc, sc := pipes(t, len(cfg.Channels))
	disp := slices.IndexFunc(cfg.Channels, func(c Channel) bool { return c.Role == Saturating })
	w := &serverWrap{Conn: sc[disp]}
	srv := rws(sc)
	srv[disp] = w

	r := runPair(context.Background(), cfg, rws(cc), srv)
	requireClean(t, r)
	if r.server.Opened != 5 || r.server.Ended != 5 {
		t.Errorf("server opened %d and ended %d channels, want 5 and 5", r.server.Opened, r.server.Ended)
	}
	checkSamples(t, r.client)
	if r.client.Timeouts != 0 {
		t.Errorf("%d timeouts over a pipe", r.client.Timeouts)
	}
	if int64(len(r.client.Samples)) != r.server.Echoes {
		t.Errorf("client has %d samples, server echoed %d requests", len(r.client.Samples), r.server.Echoes)
	}
	// net.Pipe is unbuffered, so every byte the server's writes got rid
	// of was read by the client: the counts must agree exactly. (The
	// wrapper also saw the one-byte answer to the opener.)
	got := r.client.BulkBytesTotal + r.client.BulkBytesDrained
	if got != w.written.Load()-1 || got != r.server.BulkBytesWritten {
		t.Errorf("client read %d bulk bytes, wrapper saw %d written, server reports %d", got, w.written.Load(), r.server.BulkBytesWritten)
	}
	if r.client.BulkBytesWindow <= 0 || r.client.BulkBytesWindow >= r.client.BulkBytesTotal {
		t.Errorf("window bytes %d should be positive and below the total %d (warm-up excluded)", r.client.BulkBytesWindow, r.client.BulkBytesTotal)
	}
	if r.client.BulkWindow != cfg.Duration-cfg.Warmup {
		t.Errorf("bulk window %v, want %v", r.client.BulkWindow, cfg.Duration-cfg.Warmup)
	}
	if got := r.client.End.Sub(r.client.Start); got != cfg.Duration {
		t.Errorf("run lasted %v, want %v", got, cfg.Duration)
	}
	if r.elapsed > cfg.Duration+time.Second {
		t.Errorf("run took %v for a %v duration: the ending is slow", r.elapsed, cfg.Duration)
	}
	// Results travel between processes as JSON.
	b, err := json.Marshal(r.client)
	if err != nil {
		t.Fatal(err)
	}
	var back ClientResult
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Samples, r.client.Samples) || back.BulkBytesWindow != r.client.BulkBytesWindow ||
		!slices.Equal(back.Channels, r.client.Channels) || !back.Start.Equal(r.client.Start) {
		t.Error("ClientResult does not survive a JSON round trip")
	}
}

func TestRunOverTCP(t *testing.T) {
	cfg := shortConfig(800*time.Millisecond, 200*time.Millisecond)
	cc, sc := tcpPairs(t, len(cfg.Channels))
	disp := slices.IndexFunc(cfg.Channels, func(c Channel) bool { return c.Role == Saturating })
	w := &serverWrap{Conn: sc[disp]}
	srv := rws(sc)
	srv[disp] = w

	r := runPair(context.Background(), cfg, rws(cc), srv)
	requireClean(t, r)
	checkSamples(t, r.client)
	if r.server.Ended != 5 {
		t.Errorf("server saw %d channels ended, want 5", r.server.Ended)
	}
	got := r.client.BulkBytesTotal + r.client.BulkBytesDrained
	if got <= 0 || got > w.written.Load()-1 {
		t.Errorf("client read %d bulk bytes, server wrote %d: want 0 < read <= written", got, w.written.Load())
	}
	// What was written but not read is what sat in the socket buffers when
	// the client stopped; loopback buffers are a few MB at most.
	if unread := w.written.Load() - got; unread > 32<<20 {
		t.Errorf("%d bytes written but never read", unread)
	}
	if r.client.BulkMbps <= 0 {
		t.Errorf("throughput %v Mbit/s", r.client.BulkMbps)
	}
	t.Logf("loopback: %d samples, median-ish RTT %v, %.0f Mbit/s", len(r.client.Samples), r.client.Samples[len(r.client.Samples)/2].RTT, r.client.BulkMbps)
}

func TestInjectedDelayIsMeasured(t *testing.T) {
	const delay = 30 * time.Millisecond
	cfg := shortConfig(time.Second, 0)
	cc, sc := tcpPairs(t, len(cfg.Channels))
	in := slices.IndexFunc(cfg.Channels, func(c Channel) bool { return c.Role == Interactive })
	srv := rws(sc)
	srv[in] = &serverWrap{Conn: sc[in], echoSize: cfg.EchoSize, delay: delay}

	r := runPair(context.Background(), cfg, rws(cc), srv)
	requireClean(t, r)
	checkSamples(t, r.client)
	var rtts []time.Duration
	for _, s := range r.client.Measured() {
		rtts = append(rtts, s.RTT)
	}
	slices.Sort(rtts)
	med := rtts[len(rtts)/2]
	if rtts[0] < delay {
		t.Errorf("shortest RTT %v is below the injected delay %v", rtts[0], delay)
	}
	// Loose: the machine is shared and the bulk channel is saturating
	// loopback at the same time.
	if med > delay+20*time.Millisecond {
		t.Errorf("median RTT %v, want about %v", med, delay)
	}
	// Each round trip takes delay + gap, so the count is bounded.
	if maxN := int(cfg.Duration/(delay+cfg.EchoGap)) + 1; len(rtts) > maxN {
		t.Errorf("%d samples, at most %d fit in %v", len(rtts), maxN, cfg.Duration)
	}
}

func TestTimeoutIsCounted(t *testing.T) {
	cfg := shortConfig(1500*time.Millisecond, 0)
	cfg.Timeout = 300 * time.Millisecond
	for _, tr := range []struct {
		name  string
		pairs func(testing.TB, int) ([]net.Conn, []net.Conn)
	}{{"pipe", pipes}, {"tcp", tcpPairs}} {
		t.Run(tr.name, func(t *testing.T) {
			cc, sc := tr.pairs(t, len(cfg.Channels))
			in := slices.IndexFunc(cfg.Channels, func(c Channel) bool { return c.Role == Interactive })
			srv := rws(sc)
			// The fourth echo, and every one after it, never returns.
			srv[in] = &serverWrap{Conn: sc[in], echoSize: cfg.EchoSize, onEcho: func(k int64, b []byte) []byte {
				if k >= 4 {
					return nil
				}
				return b
			}}
			r := runPair(context.Background(), cfg, rws(cc), srv)
			requireClean(t, r)
			if r.client.Timeouts != 1 || len(r.client.TimeoutOffsets) != 1 {
				t.Fatalf("timeouts %d (offsets %v), want 1", r.client.Timeouts, r.client.TimeoutOffsets)
			}
			if len(r.client.Samples) != 3 {
				t.Fatalf("%d samples, want the 3 before the timeout", len(r.client.Samples))
			}
			if last := r.client.Samples[2]; r.client.TimeoutOffsets[0] < last.Offset+last.RTT+cfg.EchoGap {
				t.Errorf("timed-out request sent at %v, before the previous one (%v + %v) and the gap had passed", r.client.TimeoutOffsets[0], last.Offset, last.RTT)
			}
			if r.server.Ended != 5 {
				t.Errorf("server saw %d channels ended, want all 5 (the client still sends the end message)", r.server.Ended)
			}
			if r.elapsed > cfg.Duration+time.Second {
				t.Errorf("run took %v", r.elapsed)
			}
		})
	}
}

func TestCorruptEchoIsAnError(t *testing.T) {
	cfg := shortConfig(600*time.Millisecond, 0)
	cc, sc := pipes(t, len(cfg.Channels))
	in := slices.IndexFunc(cfg.Channels, func(c Channel) bool { return c.Role == Interactive })
	srv := rws(sc)
	srv[in] = &serverWrap{Conn: sc[in], echoSize: cfg.EchoSize, onEcho: func(k int64, b []byte) []byte {
		if k == 5 {
			b = slices.Clone(b)
			b[40] ^= 0x01
		}
		return b
	}}
	r := runPair(context.Background(), cfg, rws(cc), srv)
	if r.clientErr != nil {
		t.Fatal(r.clientErr)
	}
	if len(r.client.Errors) != 1 {
		t.Fatalf("client errors %v, want one on the interactive channel", r.client.Errors)
	}
	e := r.client.Errors[0]
	if e.Channel != "inputs" || e.Role != Interactive || e.Phase != "run" || !strings.Contains(e.Err, "corrupted echo of request 5: byte 40") {
		t.Errorf("error %+v, want a corrupted echo of request 5 at byte 40 on inputs", e)
	}
	if len(r.client.Samples) != 4 || r.client.Timeouts != 0 {
		t.Errorf("%d samples and %d timeouts, want 4 and 0: a corrupted echo is not a sample", len(r.client.Samples), r.client.Timeouts)
	}
}

func TestOutOfOrderEchoIsAnError(t *testing.T) {
	cfg := shortConfig(600*time.Millisecond, 0)
	cc, sc := pipes(t, len(cfg.Channels))
	in := slices.IndexFunc(cfg.Channels, func(c Channel) bool { return c.Role == Interactive })
	srv := rws(sc)
	var prev []byte
	srv[in] = &serverWrap{Conn: sc[in], echoSize: cfg.EchoSize, onEcho: func(k int64, b []byte) []byte {
		if k == 3 {
			return prev // replay echo 2
		}
		prev = slices.Clone(b)
		return b
	}}
	r := runPair(context.Background(), cfg, rws(cc), srv)
	if len(r.client.Errors) != 1 || !strings.Contains(r.client.Errors[0].Err, "out of order: sent request 3, got back request 2") {
		t.Fatalf("client errors %v, want one out-of-order echo", r.client.Errors)
	}
	if len(r.client.Samples) != 2 {
		t.Errorf("%d samples, want 2", len(r.client.Samples))
	}
}

func TestRateCap(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 2.5 s")
	}
	const capBps = 20_000_000
	cfg := shortConfig(2500*time.Millisecond, 500*time.Millisecond)
	cfg.BulkRateCap = capBps
	cc, sc := tcpPairs(t, len(cfg.Channels))
	r := runPair(context.Background(), cfg, rws(cc), rws(sc))
	requireClean(t, r)
	// The cap bounds the rate from above within 5%; below it a busy host's
	// stalls can only take away, so the floor is looser (a cap applied
	// twice, or in bits where bytes were meant, still falls far below it).
	if d := r.client.BulkMbps/20 - 1; d < -0.15 || d > 0.05 {
		t.Errorf("capped at 20 Mbit/s, measured %.2f Mbit/s (%+.1f%%)", r.client.BulkMbps, 100*d)
	}
	// Warm-up: the window holds about (Duration-Warmup)/Duration of the
	// bytes when the rate is steady.
	frac := float64(r.client.BulkBytesWindow) / float64(r.client.BulkBytesTotal)
	if want := 2.0 / 2.5; frac < want-0.05 || frac > want+0.05 {
		t.Errorf("window holds %.3f of the bytes, want about %.2f", frac, want)
	}
	t.Logf("cap 20 Mbit/s: measured %.3f Mbit/s over %v, %d bytes in total, %d drained, server wrote %d", r.client.BulkMbps, r.client.BulkWindow, r.client.BulkBytesTotal, r.client.BulkBytesDrained, r.server.BulkBytesWritten)
}

func TestWarmupSplitsSamples(t *testing.T) {
	cfg := shortConfig(600*time.Millisecond, 300*time.Millisecond)
	cc, sc := pipes(t, len(cfg.Channels))
	r := runPair(context.Background(), cfg, rws(cc), rws(sc))
	requireClean(t, r)
	m := r.client.Measured()
	if len(m) == 0 || len(m) == len(r.client.Samples) {
		t.Fatalf("%d of %d samples measured: want some before and some after warm-up", len(m), len(r.client.Samples))
	}
	early := r.client.Samples[len(r.client.Samples)-len(m)-1]
	if early.Offset >= cfg.Warmup || m[0].Offset < cfg.Warmup {
		t.Errorf("split at the wrong place: last warm-up sample at %v, first measured at %v, warm-up %v", early.Offset, m[0].Offset, cfg.Warmup)
	}
}

func TestCancelEndsBothSides(t *testing.T) {
	cfg := shortConfig(30*time.Second, time.Second)
	for _, tr := range []struct {
		name  string
		pairs func(testing.TB, int) ([]net.Conn, []net.Conn)
	}{{"pipe", pipes}, {"tcp", tcpPairs}} {
		t.Run(tr.name, func(t *testing.T) {
			cc, sc := tr.pairs(t, len(cfg.Channels))
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			r := runPair(ctx, cfg, rws(cc), rws(sc))
			if r.elapsed > 2*time.Second {
				t.Errorf("cancelled run took %v to return", r.elapsed)
			}
			if !errors.Is(r.clientErr, context.DeadlineExceeded) || !r.client.Cancelled {
				t.Errorf("client error %v, cancelled %v: want the context's error", r.clientErr, r.client.Cancelled)
			}
			if !errors.Is(r.serverErr, context.DeadlineExceeded) || !r.server.Cancelled {
				t.Errorf("server error %v, cancelled %v: want the context's error", r.serverErr, r.server.Cancelled)
			}
			if len(r.client.Samples) == 0 {
				t.Error("a cancelled run should still return what it measured")
			}
			if got := r.client.End.Sub(r.client.Start); got < 200*time.Millisecond || got > time.Second {
				t.Errorf("cancelled run's window is %v, want about 300ms", got)
			}
		})
	}
}

// When one end goes away without ending the run, the other must return
// with errors, not hang.
func TestPeerVanishes(t *testing.T) {
	cfg := shortConfig(20*time.Second, 0)
	cfg.Timeout = 500 * time.Millisecond
	t.Run("client", func(t *testing.T) {
		cc, sc := tcpPairs(t, len(cfg.Channels))
		// A client process that opens the session and then dies.
		go func() {
			for i, c := range cc {
				var b [1]byte
				if _, err := c.Write([]byte{opener(i)}); err != nil {
					return
				}
				if _, err := io.ReadFull(c, b[:]); err != nil {
					return
				}
			}
			time.Sleep(200 * time.Millisecond)
			for _, c := range cc {
				c.Close()
			}
		}()
		t0 := time.Now()
		res, err := RunServer(context.Background(), cfg, rws(sc))
		if time.Since(t0) > 3*time.Second {
			t.Errorf("server took %v to notice", time.Since(t0))
		}
		if err != nil || len(res.Errors) != 5 || res.Ended != 0 || res.Opened != 5 {
			t.Errorf("server: err %v, %d channel errors, %d opened, %d ended: want 5 errors, 5 opened, nothing ended", err, len(res.Errors), res.Opened, res.Ended)
		}
		for _, e := range res.Errors {
			t.Logf("server: %v", e)
		}
	})
	t.Run("server", func(t *testing.T) {
		cc, sc := tcpPairs(t, len(cfg.Channels))
		go func() {
			_, _ = RunServer(context.Background(), cfg, rws(sc))
		}()
		time.AfterFunc(300*time.Millisecond, func() {
			for _, c := range sc {
				c.Close()
			}
		})
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		t0 := time.Now()
		res, err := RunClient(ctx, cfg, rws(cc))
		if err != nil {
			t.Fatalf("client: %v (after %v)", err, time.Since(t0))
		}
		if len(res.Errors) == 0 {
			t.Error("client reports no errors after the server vanished")
		}
		for _, e := range res.Errors {
			t.Logf("client: %v", e)
		}
		_ = res
	})
}

func TestChannelsOutOfOrder(t *testing.T) {
	cfg := shortConfig(500*time.Millisecond, 0)
	cfg.Timeout = 300 * time.Millisecond
	cc, sc := pipes(t, len(cfg.Channels))
	srv := rws(sc)
	srv[0], srv[3] = srv[3], srv[0]
	r := runPair(context.Background(), cfg, rws(cc), srv)
	if r.clientErr == nil || !strings.Contains(r.clientErr.Error(), "could not open") {
		t.Errorf("client error %v, want an opening failure", r.clientErr)
	}
	if r.serverErr == nil || !strings.Contains(r.serverErr.Error(), "3 of 5 channels opened") {
		t.Errorf("server error %v, want an opening failure", r.serverErr)
	}
	var found bool
	for _, e := range r.server.Errors {
		if strings.Contains(e.Err, "opening byte of channel 3 on channel 0") {
			found = true
		}
	}
	if !found {
		t.Errorf("server errors %v, want one naming the swapped channels", r.server.Errors)
	}
}

func TestSeveralSessions(t *testing.T) {
	cfg := shortConfig(500*time.Millisecond, 100*time.Millisecond)
	const n = 3
	var cs, ss [][]io.ReadWriter
	for range n {
		c, s := pipes(t, len(cfg.Channels))
		cs, ss = append(cs, rws(c)), append(ss, rws(s))
	}
	var (
		cr   []ClientResult
		cerr error
		done = make(chan struct{})
	)
	go func() {
		defer close(done)
		cr, cerr = RunClients(context.Background(), cfg, cs)
		for _, s := range cs {
			for _, c := range s {
				c.(io.Closer).Close()
			}
		}
	}()
	sr, serr := RunServers(context.Background(), cfg, ss)
	<-done
	if cerr != nil || serr != nil {
		t.Fatal(cerr, serr)
	}
	if len(cr) != n || len(sr) != n {
		t.Fatalf("%d client and %d server results, want %d", len(cr), len(sr), n)
	}
	for i := range n {
		if cr[i].Err() != nil || sr[i].Err() != nil || len(cr[i].Samples) == 0 || sr[i].Ended != 5 {
			t.Errorf("session %d: client %v, server %v, %d samples, %d ended", i, cr[i].Err(), sr[i].Err(), len(cr[i].Samples), sr[i].Ended)
		}
	}
}

func TestQuietOnlyAndCustomRoles(t *testing.T) {
	// A session without bulk load (display made quiet) and more quiet
	// channels: the baseline of "how does the echo do alone".
	chans, err := SessionChannels(5)
	if err != nil {
		t.Fatal(err)
	}
	for i := range chans {
		if chans[i].Name == "display" {
			chans[i].Role = Quiet
		}
	}
	cfg := shortConfig(300*time.Millisecond, 0)
	cfg.Channels = chans
	cc, sc := pipes(t, len(chans))
	r := runPair(context.Background(), cfg, rws(cc), rws(sc))
	requireClean(t, r)
	if r.server.Ended != 7 || r.client.BulkBytesTotal != 0 || r.server.BulkBytesWritten != 0 || len(r.client.Samples) == 0 {
		t.Errorf("ended %d, bulk %d/%d, %d samples", r.server.Ended, r.client.BulkBytesTotal, r.server.BulkBytesWritten, len(r.client.Samples))
	}
}

func TestMismatchedEchoSize(t *testing.T) {
	cfg := shortConfig(300*time.Millisecond, 0)
	cfg.Timeout = 300 * time.Millisecond
	scfg := cfg
	scfg.EchoSize = 128
	cc, sc := tcpPairs(t, len(cfg.Channels))
	var r pairResult
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.client, r.clientErr = RunClient(context.Background(), cfg, rws(cc))
		for _, c := range cc {
			c.Close()
		}
	}()
	r.server, r.serverErr = RunServer(context.Background(), scfg, rws(sc))
	<-done
	var found bool
	for _, e := range r.server.Errors {
		found = found || strings.Contains(e.Err, "64-byte interactive messages but this server is configured for EchoSize 128")
	}
	if !found {
		t.Errorf("server errors %v, want the size mismatch named", r.server.Errors)
	}
}

// A client that opens the session and then neither ends it nor goes away
// (a hung process): the server gives up after Duration + 3×Timeout.
func TestServerGivesUpOnSilentClient(t *testing.T) {
	cfg := shortConfig(300*time.Millisecond, 0)
	cfg.Timeout = 200 * time.Millisecond
	cc, sc := pipes(t, len(cfg.Channels))
	go func() {
		for i, c := range cc {
			var b [1]byte
			if _, err := c.Write([]byte{opener(i)}); err != nil {
				return
			}
			if _, err := io.ReadFull(c, b[:]); err != nil {
				return
			}
		}
	}()
	t0 := time.Now()
	res, err := RunServer(context.Background(), cfg, sc)
	took := time.Since(t0)
	if err != nil {
		t.Fatal(err)
	}
	if limit := cfg.Duration + 3*cfg.Timeout; took < limit || took > limit+time.Second {
		t.Errorf("server gave up after %v, want just after %v", took, limit)
	}
	if res.Opened != 5 || res.Ended != 0 || len(res.Errors) != 5 || !strings.Contains(res.Errors[0].Err, "did not end the run within") {
		t.Errorf("opened %d, ended %d, errors %v", res.Opened, res.Ended, res.Errors)
	}
}

// A server whose client never arrives gives up after Timeout.
func TestServerOpeningTimesOut(t *testing.T) {
	cfg := shortConfig(time.Second, 0)
	cfg.Timeout = 200 * time.Millisecond
	_, sc := pipes(t, len(cfg.Channels))
	t0 := time.Now()
	res, err := RunServer(context.Background(), cfg, sc)
	if took := time.Since(t0); took > time.Second {
		t.Errorf("took %v", took)
	}
	if err == nil || res.Opened != 0 || len(res.Errors) != 5 || res.Errors[0].Phase != "open" || !strings.Contains(res.Errors[0].Err, "did not arrive within 200ms") {
		t.Errorf("err %v, opened %d, errors %v", err, res.Opened, res.Errors)
	}
}
