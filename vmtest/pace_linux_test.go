package vmtest

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/shakenfist/quicbench/shapedlink"
	"golang.org/x/sys/unix"
)

// Timing under a loaded host. Inside the TCG VM a busy host deschedules
// the emulated CPUs now and then for tens of milliseconds: a sender
// stalls, a reading goroutine runs late, netem's timers fire late. The
// helpers here keep those out of what the tests measure where the
// mechanism allows: senders keep their pace after a stall instead of
// sending their backlog in one burst (pacer), arrivals are timed by the
// kernel's receive stamp instead of when a goroutine read them
// (stampReceives, kernelStamp), and receivers wait until the link holds
// nothing more instead of for a fixed time (waitDrained).

// pacer hands a sender its slots, gap apart. A slot missed by more than
// slack (the sender was not run: a loaded host descheduled the emulated
// CPU) is skipped with every other missed one, and the pace goes on from
// now: the backlog is never sent in one burst, which a queue limit would
// cut and which would bunch the arrivals.
type pacer struct {
	gap, slack time.Duration
	next       time.Time
	skipped    int // slots skipped after stalls
	now        func() time.Time
	sleep      func(time.Duration)
}

// newPacer returns a pacer whose first slot is now.
func newPacer(gap, slack time.Duration) *pacer {
	return &pacer{gap: gap, slack: slack, next: time.Now(), now: time.Now, sleep: time.Sleep}
}

// wait sleeps until the next slot and moves on to the one after it.
func (p *pacer) wait() {
	if d := p.next.Sub(p.now()); d > 0 {
		p.sleep(d)
	}
	if late := p.now().Sub(p.next); late > p.slack {
		p.skipped += int(late / p.gap)
		p.next = p.now()
	}
	p.next = p.next.Add(p.gap)
}

// stampReceives has the kernel stamp each datagram c receives
// (SO_TIMESTAMPNS), for kernelStamp to read from ReadMsgUDP's control
// messages.
func stampReceives(t *testing.T, c *net.UDPConn) {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		t.Fatalf("SO_TIMESTAMPNS on the receiving socket: %v %v", err, serr)
	}
}

// kernelStamp is the SCM_TIMESTAMPNS time in a datagram's control
// messages, or the zero Time.
func kernelStamp(oob []byte) time.Time {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= int(unsafe.Sizeof(unix.Timespec{})) {
			ts := *(*unix.Timespec)(unsafe.Pointer(&m.Data[0]))
			return time.Unix(ts.Unix())
		}
	}
	return time.Time{}
}

// reader reads datagrams from a socket in a goroutine until stopped.
type reader struct {
	c         *net.UDPConn
	stopping  atomic.Bool
	done      chan struct{}
	unstamped int // datagrams without a kernel stamp, timed when read
}

// readQuiet is how long a stopping reader waits for another datagram.
const readQuiet = 300 * time.Millisecond

// readUDP starts reading c, handing fn each datagram (valid only during
// the call) with its kernel receive stamp if c has them on (stampReceives;
// otherwise, and for a datagram without one, the time it was read).
func readUDP(c *net.UDPConn, fn func(b []byte, at time.Time)) *reader {
	r := &reader{c: c, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		buf, oob := make([]byte, 65536), make([]byte, 128)
		for {
			// Once stopping, each read waits at most readQuiet.
			armed := r.stopping.Load()
			if armed {
				_ = c.SetReadDeadline(time.Now().Add(readQuiet))
			}
			k, oobn, _, _, err := c.ReadMsgUDP(buf, oob)
			if err != nil {
				if !armed && r.stopping.Load() && errors.Is(err, os.ErrDeadlineExceeded) {
					continue // stop's wake-up, not the quiet time
				}
				return
			}
			at := kernelStamp(oob[:oobn])
			if at.IsZero() {
				r.unstamped++
				at = time.Now()
			}
			fn(buf[:k], at)
		}
	}()
	return r
}

// stop reads what is still queued on the socket, until nothing has come
// for readQuiet (so a reader the emulated CPU runs late still gets what
// arrived, which closing the socket would throw away), then closes it.
// fn is not called after stop returns.
func (r *reader) stop() {
	r.stopping.Store(true)
	_ = r.c.SetReadDeadline(time.Now()) // wake a blocked read
	<-r.done
	r.c.Close()
}

// held is how many packets the link holds that from sent: the queue of
// the root qdisc on from's device for netem (delay line included), the
// frames the emulator holds in that direction.
func held(t *testing.T, l vmLink, from end) int {
	t.Helper()
	if l.Backend() == shapedlink.BackendNetem {
		_, _, qlen, _ := qdiscCounters(t, l, from)
		return int(qlen)
	}
	want := "server->client"
	if from == clientEnd {
		want = "client->server"
	}
	st, ok := l.Instruments().ShaperStats()
	if !ok {
		t.Fatalf("the %s link has no shaper statistics", l.Backend())
	}
	for _, d := range st.Directions {
		if d.Direction == want {
			return int(d.Packets)
		}
	}
	t.Fatalf("the shaper statistics have no %s direction: %+v", want, st.Directions)
	return 0
}

// waitDrained waits until the link holds nothing more that from sent
// (up to 30 s: a loaded host runs the emulated CPU late, and with it
// netem's timers and the emulator), then 50 ms more for the last
// datagrams to cross the receiving namespace.
func waitDrained(t *testing.T, l vmLink, from end) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); held(t, l, from) > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Logf("the link still holds %d packets from the %s end after 30 s", held(t, l, from), from)
			return
		}
	}
	time.Sleep(50 * time.Millisecond)
}

// oneWayRounds sends n rounds of one 64-byte probe each way across l (on
// port, at both ends), one round at a time: both probes are sent, then
// both are awaited, then gap passes before the next round. It returns each
// direction's one-way delays (index 0 server to client, 1 client to
// server), each from just before the write to the kernel's receive stamp:
// the ends' scheduling is left out, the link's (netem's timers included)
// is kept. The two directions' probes of a round see the same moments of
// the host's load, so either can serve as the other's control.
func oneWayRounds(t *testing.T, l vmLink, port, n int, gap time.Duration) [2][]time.Duration {
	t.Helper()
	var rx, tx [2]*net.UDPConn
	for i, dir := range [2][2]end{{serverEnd, clientEnd}, {clientEnd, serverEnd}} {
		c, err := listenUDP(l, dir[1], port)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		stampReceives(t, c)
		rx[i] = c
		if tx[i], err = dialUDP(l, dir[0], dir[1], port); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tx[i].Close() })
	}
	var out [2][]time.Duration
	msg, buf, oob := make([]byte, 64), make([]byte, 128), make([]byte, 128)
	for r := range n {
		var sent [2]time.Time
		for i := range tx {
			binary.BigEndian.PutUint32(msg, uint32(r))
			sent[i] = time.Now()
			if _, err := tx[i].Write(msg); err != nil {
				t.Fatal(err)
			}
		}
		for i, c := range rx {
			_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
			for {
				k, oobn, _, _, err := c.ReadMsgUDP(buf, oob)
				if err != nil {
					t.Fatalf("round %d: the probe %s did not arrive within 5 s: %v", r, []string{"server to client", "client to server"}[i], err)
				}
				if k != len(msg) || binary.BigEndian.Uint32(buf) != uint32(r) {
					continue
				}
				at := kernelStamp(oob[:oobn])
				if at.IsZero() {
					t.Fatalf("round %d: a probe came without the kernel's receive stamp", r)
				}
				out[i] = append(out[i], at.Sub(sent[i]))
				break
			}
		}
		time.Sleep(gap)
	}
	return out
}

// slope is the least-squares slope of the times at, sorted, against
// their order: the spacing of departures that leave back to back. Late
// timers, which bunch a few departures and hold back the rest, scatter
// the times about that line without tilting it, and the first and last
// weigh no more than the others. It returns 0 for fewer than two times.
func slope(at []time.Time) time.Duration {
	n := len(at)
	if n < 2 {
		return 0
	}
	s := slices.Clone(at)
	slices.SortFunc(s, func(a, b time.Time) int { return a.Compare(b) })
	mx := float64(n-1) / 2
	var my float64
	for _, t := range s {
		my += float64(t.Sub(s[0]))
	}
	my /= float64(n)
	var sxy, sxx float64
	for i, t := range s {
		dx := float64(i) - mx
		sxy += dx * (float64(t.Sub(s[0])) - my)
		sxx += dx * dx
	}
	return time.Duration(sxy / sxx)
}

// TestPacer: a sender stalled for ten slots goes on at its pace after
// the stall, one slot per gap, instead of taking the ten missed slots at
// once; lateness within the slack keeps the schedule.
func TestPacer(t *testing.T) {
	clock := time.Unix(1000, 0)
	p := &pacer{gap: 10 * time.Millisecond, slack: 10 * time.Millisecond, next: clock,
		now: func() time.Time { return clock }, sleep: func(d time.Duration) { clock = clock.Add(d) }}
	var at []time.Duration
	for i := range 30 {
		switch i {
		case 5:
			clock = clock.Add(100 * time.Millisecond) // a stall of ten slots
		case 20:
			clock = clock.Add(17 * time.Millisecond) // 7 ms late, within the slack
		}
		p.wait()
		at = append(at, clock.Sub(time.Unix(1000, 0)))
	}
	for i := 1; i < len(at); i++ {
		if d := at[i] - at[i-1]; d < 2*time.Millisecond {
			t.Errorf("slot %d came %v after slot %d: the pacer sent a backlog in a burst (slots at %v)", i, d, i-1, at)
			break
		}
	}
	if p.skipped < 9 || p.skipped > 10 {
		t.Errorf("skipped %d slots after a stall of ten, want 9 or 10", p.skipped)
	}
	// Lateness within the slack: the slot after it comes early enough to
	// keep the schedule (20 slots after the stall's end, 200 ms).
	if d := at[22] - at[6]; d != 160*time.Millisecond {
		t.Errorf("slots 6 to 22 spanned %v, want 160ms: lateness within the slack moved the schedule (slots at %v)", d, at)
	}
}

// TestReaderStop: a reader stopped while datagrams wait on its socket
// (its goroutine ran late) still gets every one of them, where closing
// the socket at once would throw them away.
func TestReaderStop(t *testing.T) {
	c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := net.DialUDP("udp4", nil, c.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	gate := make(chan struct{})
	n := 0
	r := readUDP(c, func([]byte, time.Time) {
		if n == 0 {
			<-gate // a reader the emulated CPU runs late
		}
		n++
	})
	const sent = 100
	for range sent {
		if _, err := tx.Write(make([]byte, 64)); err != nil {
			t.Fatal(err)
		}
	}
	time.AfterFunc(100*time.Millisecond, func() { close(gate) })
	r.stop()
	if n != sent {
		t.Errorf("the reader got %d of the %d datagrams sent before it stopped", n, sent)
	}
}

// TestKSControl: ksControl accepts delays with the configured jitter
// under an idle host's small lateness and under a loaded host's large,
// heavy-tailed one (which the one-sample test against the jitter alone,
// shifted by up to 4 ms as TestNetemJitter once allowed, rejects), and
// rejects half the jitter ("jitter" breakage) or a normal of half the
// spread ("dist") when the host is idle.
func TestKSControl(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 1))
	uniform := func(j float64) func(float64) float64 {
		return func(ms float64) float64 { return math.Min(1, math.Max(0, (ms+j)/(2*j))) }
	}
	normal := func(sd float64) func(float64) float64 {
		return func(ms float64) float64 { return 0.5 * math.Erfc(-ms/sd/math.Sqrt2) }
	}
	drawUniform := func(j float64) func() float64 { return func() float64 { return (2*rng.Float64() - 1) * j } }
	drawNormal := func(sd float64) func() float64 { return func() float64 { return rng.NormFloat64() * sd } }
	idle := func() float64 { return rng.ExpFloat64() * 0.3 }
	loaded := func() float64 {
		l := rng.ExpFloat64() * 10
		if rng.Float64() < 0.05 {
			l += 100 * rng.Float64()
		}
		return l
	}
	for _, tc := range []struct {
		name   string
		n      int
		jitter func() float64
		late   func() float64
		cdf    func(float64) float64
		reject bool
	}{
		{"uniform idle", 200, drawUniform(40), idle, uniform(40), false},
		{"uniform loaded", 200, drawUniform(40), loaded, uniform(40), false},
		{"half uniform idle", 200, drawUniform(20), idle, uniform(40), true},
		{"normal idle", 400, drawNormal(10), idle, normal(10), false},
		{"normal loaded", 400, drawNormal(10), loaded, normal(10), false},
		{"half normal idle", 400, drawNormal(5), idle, normal(10), true},
	} {
		x, late := make([]float64, tc.n), make([]float64, tc.n)
		for i := range tc.n {
			x[i] = 50 + tc.jitter() + tc.late()
			late[i] = tc.late()
		}
		d, one, crit := ksControl(x, late, 50, tc.cdf)
		t.Logf("%s: distance %.4f, critical %.4f (one-sample %.4f)", tc.name, d, crit, one)
		if (d > crit) != tc.reject {
			t.Errorf("%s: distance %.4f against critical %.4f, want rejected %v", tc.name, d, crit, tc.reject)
		}
		if tc.name == "uniform loaded" {
			// What TestNetemJitter did before: the jitter alone,
			// shifted by the best of 0 to 4 ms.
			best := math.Inf(1)
			for s := 0.0; s <= 4; s += 0.25 {
				var k float64
				for i, xi := range x {
					f := tc.cdf(xi - 50 - s)
					k = max(k, math.Abs(f-float64(i)/float64(tc.n)), math.Abs(f-float64(i+1)/float64(tc.n)))
				}
				best = min(best, k)
			}
			if best <= one {
				t.Errorf("the loaded sample passes the shifted one-sample test too (%.4f <= %.4f): it does not show why the control is needed", best, one)
			}
		}
	}
}

// TestReordered: a datagram counts as reordered when it arrived before
// one sent 100 ms or more earlier, whatever lateness held every datagram
// in flight alike (as a stalled emulated CPU does), which a threshold on
// the delay would miss; one with nothing sent 100-200 ms before it (after
// a stall of the sender) is left out of the count.
func TestReordered(t *testing.T) {
	const n = 2000
	s := make([]streamed, n)
	want, wantEligible := 0, 0
	for i := range s {
		s[i] = streamed{copies: 1, sent: time.Duration(i) * time.Millisecond}
		if i >= 1000 {
			s[i].sent += 500 * time.Millisecond // the sender stalled
		}
		s[i].at = s[i].sent + 300*time.Millisecond
		eligible := (i >= 100 && i < 1000) || i >= 1100
		if eligible {
			wantEligible++
		}
		if i%4 == 1 {
			s[i].at = s[i].sent // sent ahead of the delayed ones
			if eligible {
				want++
			}
		}
	}
	s[500].copies = 0 // lost
	wantEligible--
	// A stall that holds everything due in it for 200 ms, then lets it
	// go in order, before what is due after it.
	for i := range s {
		if s[i].at >= 600*time.Millisecond && s[i].at < 800*time.Millisecond {
			s[i].at = 800*time.Millisecond - (800*time.Millisecond-s[i].at)/1000
		}
	}
	got, eligible := reordered(s, 100*time.Millisecond, 200*time.Millisecond)
	if got != want || eligible != wantEligible {
		t.Errorf("reordered = %d of %d, want %d of %d", got, eligible, want, wantEligible)
	}
	// A threshold on the delay (half of it) misses those the stall held.
	early := 0
	for i, x := range s {
		if x.copies > 0 && x.delay() < 150*time.Millisecond && ((i >= 100 && i < 1000) || i >= 1100) {
			early++
		}
	}
	if early >= want {
		t.Errorf("the stall moved no delay across 150 ms: the case does not show the difference")
	}
}

// TestSlope: slope finds the spacing of back-to-back departures, 1.15 ms
// (1442-byte frames at 10 Mbit/s), when the emulated CPU runs only 3 ms
// of every 25 (a busy host) and each departure waits for it, so they
// leave in bunches of about 20, and when the last is 100 ms late. A
// median over ten at a time reads 0.2 ms here (and read microseconds in
// the VM at a load of 20); the whole span, 5% too long.
func TestSlope(t *testing.T) {
	const ser = 1153 * time.Microsecond
	var at []time.Time
	base := time.Unix(1000, 0)
	for i := range 2000 {
		due := time.Duration(i) * ser
		if off := due % (25 * time.Millisecond); off >= 3*time.Millisecond {
			due += 25*time.Millisecond - off // waits for the CPU's next turn
		}
		if i == 1999 {
			due += 100 * time.Millisecond
		}
		at = append(at, base.Add(due))
	}
	if got := slope(at); got < ser*99/100 || got > ser*101/100 {
		t.Errorf("slope = %v, want %v", got, ser)
	}
	if slope(at[:1]) != 0 {
		t.Errorf("slope of one time is not 0")
	}
}
