package vmtest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/gsocheck"
	"github.com/shakenfist/quicbench/shapedlink"
	"golang.org/x/sys/unix"
)

// Timing note for everything below: inside the VM the CPU is emulated by
// qemu's TCG, which runs guest code many times slower than the host and
// delivers timer interrupts late. netem can never deliver a packet early, so
// lower bounds on delay are sharp; upper bounds allow for TCG's slowness and
// are deliberately loose. They are still far tighter than any plausible
// mis-encoding (delay off by a factor of two, of 1000, rate in bits instead
// of bytes).

// TestNetemReadBack checks what the kernel reports for each end's qdisc
// against values computed independently from the profile string (expectNetem):
// delay RTT/2, rate in bytes per second, packet limit, the loss probability,
// and no loss term at all when the profile has no loss.
func TestNetemReadBack(t *testing.T) {
	tpu, err := ticksPerMicrosecond()
	if err != nil {
		t.Fatal(err)
	}
	for _, profile := range []string{"80:10", "80:10:1", "150:2:0.5", "40:100:5@50", "25:1.5:0.25"} {
		t.Run(profile, func(t *testing.T) {
			exp, err := expectNetem(profile)
			if err != nil {
				t.Fatal(err)
			}
			l := newLink(t, profile)
			for _, e := range []end{serverEnd, clientEnd} {
				n, _, err := netemStats(l, e)
				if err != nil {
					t.Fatalf("%s end: %v", e, err)
				}
				t.Logf("%s end read back: latency %d ticks, limit %d, loss %d/2^32, rate %d B/s", e, n.Latency, n.Limit, n.Loss, n.Rate64)
				gotDelay := time.Duration(float64(n.Latency) / tpu * float64(time.Microsecond))
				if d := gotDelay - exp.Delay; d < -time.Microsecond || d > time.Microsecond {
					t.Errorf("%s end: delay %v (%d ticks at %.3f ticks/us), want %v (RTT/2)", e, gotDelay, n.Latency, tpu, exp.Delay)
				}
				if n.Rate64 != exp.RateBytes {
					t.Errorf("%s end: rate %d bytes/s, want %d", e, n.Rate64, exp.RateBytes)
				}
				if n.Limit != exp.Limit {
					t.Errorf("%s end: limit %d packets, want %d", e, n.Limit, exp.Limit)
				}
				if exp.LossPct == 0 {
					if n.Loss != 0 || n.LossCorr != 0 {
						t.Errorf("%s end: loss %d, correlation %d; want no loss term at all for a loss-free profile", e, n.Loss, n.LossCorr)
					}
				} else {
					want := float64(lossFraction(exp.LossPct))
					// float32 arithmetic in the encoder is allowed for:
					// a few parts in 10^7.
					if math.Abs(float64(n.Loss)-want) > 1e-6*want+8 {
						t.Errorf("%s end: loss %d/2^32 (%.6f%%), want %.0f (%g%%)", e, n.Loss, float64(n.Loss)/math.MaxUint32*100, want, exp.LossPct)
					}
				}
				if n.Jitter != 0 || n.Duplicate != 0 || n.ReorderProb != 0 || n.CorruptProb != 0 || n.Gap != 0 {
					t.Errorf("%s end: unexpected extra netem terms %+v", e, n)
				}
				checkApplied(t, l, e, exp)
			}
		})
	}
}

// checkApplied checks that shapedlink's description of the end as applied
// (read back from the kernel, in tc's words) names the expected limit and
// delay, and mentions loss exactly when the profile has loss.
func checkApplied(t *testing.T, l vmLink, e end, exp netemParams) {
	t.Helper()
	var line string
	for _, a := range l.Applied() {
		if strings.Contains(a, l.Dev(e)+":") {
			line = a
		}
	}
	if line == "" {
		t.Errorf("%s end: no line for %s in Applied() %q", e, l.Dev(e), l.Applied())
		return
	}
	ms := strconv.FormatFloat(float64(exp.Delay)/float64(time.Millisecond), 'f', -1, 64) + "ms"
	for _, want := range []string{fmt.Sprintf("limit %d", exp.Limit), "delay " + ms} {
		if !strings.Contains(line, want) {
			t.Errorf("%s end: Applied line %q does not say %q", e, line, want)
		}
	}
	if got := strings.Contains(line, "loss"); got != (exp.LossPct > 0) {
		t.Errorf("%s end: Applied line %q mentions loss: %v, profile loss %g%%", e, line, got, exp.LossPct)
	}
}

// TestNetemAutoBackend checks that, on a kernel with sch_netem, shapedlink
// chooses netem by itself and its host-state record says so.
func TestNetemAutoBackend(t *testing.T) {
	requireNetem(t)
	p, err := shapedlink.ParseProfile("80:10")
	if err != nil {
		t.Fatal(err)
	}
	l, err := shapedlink.New(context.Background(), p, shapedlink.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if l.Backend() != shapedlink.BackendNetem {
		t.Errorf("automatic backend choice gave %q on a kernel with sch_netem, want netem", l.Backend())
	}
	hs, err := l.Instruments().HostState()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("host state: kernel %s, netem %v, backend %s, mode %s, cc %s of %v, offload %v",
		hs.KernelRelease, hs.NetemAvailable, hs.Backend, hs.Mode, hs.TCPCongestionControl, hs.TCPAvailableCongestionControl, hs.Offload)
	if !hs.NetemAvailable {
		t.Errorf("HostState says netem is unavailable on a kernel where it was just used")
	}
}

// echoServer echoes every datagram back to its sender until c is closed.
func echoServer(c *net.UDPConn) {
	buf := make([]byte, 65536)
	for {
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			return
		}
		_, _ = c.WriteToUDPAddrPort(buf[:n], from)
	}
}

// TestNetemIdleRTT sends 30 rounds of one 64-byte probe each way over an
// otherwise idle link and checks each direction's one-way delay against
// RTT/2 (the round trip is the two together). Each probe is timed from
// just before its write to the kernel's receive stamp, so the ends'
// scheduling on a loaded host stays out of the figure; netem's own late
// timers stay in.
func TestNetemIdleRTT(t *testing.T) {
	for _, profile := range []string{"20:10", "80:10"} {
		t.Run(profile, func(t *testing.T) {
			exp, err := expectNetem(profile)
			if err != nil {
				t.Fatal(err)
			}
			l := newLink(t, profile)
			const n = 30
			ds := oneWayRounds(t, l, 7001, n, 10*time.Millisecond)
			// Serialising the 106-byte frame at the profile's rate is
			// part of the expected delay.
			ser := time.Duration(float64(64+42) / float64(exp.RateBytes) * float64(time.Second))
			for i, dir := range []string{"server to client", "client to server"} {
				p50, p95, lo := percentile(ds[i], 50), percentile(ds[i], 95), percentile(ds[i], 1)
				t.Logf("%s: one-way delay over %d probes: min %v p50 %v p95 %v (configured %v)", dir, n, lo, p50, p95, exp.Delay)
				if lo < exp.Delay {
					t.Errorf("%s: minimum delay %v is below the configured %v (RTT/2)", dir, lo, exp.Delay)
				}
				// The minimum is the statistic that tests the
				// configured delay: late timers only ever add to a
				// delay, and some of the 30 probes get through with
				// little added. Its bound (half the delay or 5 ms
				// over) still excludes the whole RTT in one
				// direction. The median gets the loose TCG
				// allowance.
				if limit := exp.Delay + ser + max(5*time.Millisecond, exp.Delay/2); lo > limit {
					t.Errorf("%s: minimum delay %v exceeds the configured %v by more than %v", dir, lo, exp.Delay, limit-exp.Delay)
				}
				if limit := exp.Delay + ser + max(25*time.Millisecond, exp.Delay); p50 > limit {
					t.Errorf("%s: median delay %v exceeds the configured %v by more than %v (TCG allowance)", dir, p50, exp.Delay, limit-exp.Delay)
				}
			}
		})
	}
}

// blast sends count datagrams of size bytes from c. Every burst datagrams
// it sleeps for gap (0: no pauses). It returns how many were sent and how
// long it took.
func blast(c *net.UDPConn, count, size, burst int, gap time.Duration) (int, time.Duration, error) {
	msg := make([]byte, size)
	start := time.Now()
	sent := 0
	for i := 0; i < count; i++ {
		if _, err := c.Write(msg); err != nil {
			return sent, time.Since(start), err
		}
		sent++
		if gap > 0 && burst > 0 && (i+1)%burst == 0 {
			time.Sleep(gap)
		}
	}
	return sent, time.Since(start), nil
}

// binomialBounds returns the interval mean ± z standard deviations for the
// number of successes in n trials of probability p.
func binomialBounds(n int, p, z float64) (lo, hi float64) {
	mean := float64(n) * p
	sd := math.Sqrt(float64(n) * p * (1 - p))
	return mean - z*sd, mean + z*sd
}

// TestNetemLoss sends a fixed number of datagrams in each direction over a
// lossy link whose limit is high enough never to drop, and checks that the
// number lost lies inside a binomial interval around the configured loss,
// and that the qdisc's drop counter accounts for every lost datagram.
func TestNetemLoss(t *testing.T) {
	const profile = "20:10:10@5000"
	const n = 2000
	exp, err := expectNetem(profile)
	if err != nil {
		t.Fatal(err)
	}
	l := newLink(t, profile)
	for i, dir := range [][2]end{{clientEnd, serverEnd}, {serverEnd, clientEnd}} {
		from, to := dir[0], dir[1]
		port := 7100 + i
		rx, err := listenUDP(l, to, port)
		if err != nil {
			t.Fatal(err)
		}
		k := countUDP(rx)
		tx, err := dialUDP(l, from, to, port)
		if err != nil {
			t.Fatal(err)
		}
		_, before, err := netemStats(l, from)
		if err != nil {
			t.Fatal(err)
		}
		rbefore, err := udpRcvbufErrors(l, to)
		if err != nil {
			t.Fatal(err)
		}
		sent, took, err := blast(tx, n, 64, 20, 2*time.Millisecond)
		tx.Close()
		if err != nil {
			t.Fatal(err)
		}
		waitDrained(t, l, from)
		got := k.stop()
		_, after, err := netemStats(l, from)
		if err != nil {
			t.Fatal(err)
		}
		rafter, err := udpRcvbufErrors(l, to)
		if err != nil {
			t.Fatal(err)
		}
		lost := sent - got
		drops := int(after.Drops - before.Drops)
		lo, hi := binomialBounds(sent, exp.LossPct/100, 4.5)
		t.Logf("%s -> %s: sent %d in %v, received %d, lost %d (%.2f%%), qdisc drops %d; 4.5-sigma binomial interval for %g%%: [%.0f, %.0f]",
			from, to, sent, took.Round(time.Millisecond), got, lost, 100*float64(lost)/float64(sent), drops, exp.LossPct, lo, hi)
		if float64(lost) < lo || float64(lost) > hi {
			t.Errorf("%s -> %s: lost %d of %d, outside [%.0f, %.0f] for %g%% loss", from, to, lost, sent, lo, hi, exp.LossPct)
		}
		// shapedlink installs permanent neighbour entries and turns
		// IPv6 off, so nothing but the test's datagrams crosses the
		// qdisc: its drop counter must match exactly.
		if drops != lost {
			t.Errorf("%s -> %s: the qdisc counted %d drops but %d datagrams were lost (the receiving socket's buffer dropped %d): something other than netem's loss dropped them", from, to, drops, lost, rafter-rbefore)
		}
	}
}

// TestNetemLimit sends a burst much larger than the queue limit and checks
// that the limit drops the excess: with limit 20 at least the first 20
// datagrams arrive and the rest are dropped except what drained while the
// burst was being sent. With the limit raised, the same burst loses nothing,
// so the limit is what dropped.
func TestNetemLimit(t *testing.T) {
	for _, tc := range []struct {
		profile string
		drops   bool
	}{{"40:10@20", true}, {"40:10@1000", false}} {
		t.Run(tc.profile, func(t *testing.T) {
			exp, err := expectNetem(tc.profile)
			if err != nil {
				t.Fatal(err)
			}
			l := newLink(t, tc.profile)
			_, before, err := netemStats(l, clientEnd)
			if err != nil {
				t.Fatal(err)
			}
			rx, err := listenUDP(l, serverEnd, 7200)
			if err != nil {
				t.Fatal(err)
			}
			k := countUDP(rx)
			tx, err := dialUDP(l, clientEnd, serverEnd, 7200)
			if err != nil {
				t.Fatal(err)
			}
			stop := startSampler(t, l, clientEnd, 2*time.Millisecond)
			time.Sleep(20 * time.Millisecond)
			const count = 300
			sent, took, err := blast(tx, count, 1400, 0, 0)
			tx.Close()
			if err != nil {
				t.Fatal(err)
			}
			waitDrained(t, l, clientEnd)
			samples := stop()
			got := k.stop()
			_, st, err := netemStats(l, clientEnd)
			if err != nil {
				t.Fatal(err)
			}
			st.Drops -= before.Drops
			maxQ := 0
			for _, s := range samples {
				maxQ = max(maxQ, s.Packets)
			}
			t.Logf("sent %d x 1400 B in %v, received %d, qdisc drops %d, largest sampled queue %d packets (limit %d, %d samples)",
				sent, took.Round(time.Millisecond), got, st.Drops, maxQ, exp.Limit, len(samples))
			if maxQ > int(exp.Limit) {
				t.Errorf("the queue held %d packets, more than the limit %d", maxQ, exp.Limit)
			}
			if got+int(st.Drops) != sent {
				t.Errorf("received %d + dropped %d != sent %d", got, st.Drops, sent)
			}
			if !tc.drops {
				if st.Drops != 0 {
					t.Errorf("%d drops with a limit (%d) above the burst (%d)", st.Drops, exp.Limit, count)
				}
				return
			}
			// What can have left the queue while the burst was sent:
			// one packet per serialisation time after the delay.
			ser := time.Duration(float64(1442) / float64(exp.RateBytes) * float64(time.Second))
			drained := 0
			if took > exp.Delay {
				drained = int((took-exp.Delay)/ser) + 1
			}
			if got < int(exp.Limit) || got > int(exp.Limit)+drained+2 {
				t.Errorf("received %d, want between the limit %d and limit + %d drained during the %v burst", got, exp.Limit, drained+2, took)
			}
			if st.Drops == 0 {
				t.Errorf("no drops from a %d-packet burst into a %d-packet limit", count, exp.Limit)
			}
		})
	}
}

// TestNetemRate overdrives one direction at about twice the configured
// rate with 1400-byte datagrams and measures the rate they arrive at. netem
// serialises each packet's length including the 14-byte Ethernet header, so
// the arrival rate in frame bytes (1442 per datagram) is compared with the
// configured rate. Bounds are loose (0.85-1.05 of the rate) for TCG; a rate
// passed in the wrong unit is off by a factor of eight. The limit (1000)
// keeps a queue standing through the sender's stalls.
func TestNetemRate(t *testing.T) {
	const profile = "40:10@1000"
	exp, err := expectNetem(profile)
	if err != nil {
		t.Fatal(err)
	}
	l := newLink(t, profile)
	checkArrivalRate(t, l, clientEnd, serverEnd, 7400, exp.RateBytes)
}

// checkArrivalRate overdrives the direction from -> to of l with UDP at
// twice rateBytes for 2 s and checks that frames arrive at the rate
// (0.85-1.05 of it; TCG's timing is loose). The rate is taken from the
// kernel's receive stamps as their least-squares spacing (slope), which
// is netem's serialisation time while its queue stands: late timers that
// bunch departures, at the ends of the run too, do not move it. l's
// limit must hold what the sender offers while the link is busy (the
// tests use 1000): a busy host stalls the sender for longer than a
// default limit's queue lasts, and an empty queue would leave the link
// idle.
func checkArrivalRate(t *testing.T, l vmLink, from, to end, port int, rateBytes uint64) {
	t.Helper()
	const frame = 1442
	rx, err := listenUDP(l, to, port)
	if err != nil {
		t.Fatal(err)
	}
	stampReceives(t, rx)
	var arrived []time.Time
	r := readUDP(rx, func(_ []byte, at time.Time) { arrived = append(arrived, at) })
	defer r.stop()
	tx, err := dialUDP(l, from, to, port)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	// Twice the rate: one frame per (frame*8/rate)/2 seconds, sent in
	// bursts of 10 so that sleeping is coarse enough for TCG. A sender
	// stalled by a busy host catches up here, unlike the other tests'
	// senders: it overdrives the link, and a burst after a stall only
	// refills the queue the limit keeps.
	interval := time.Duration(float64(frame) / float64(rateBytes) / 2 * float64(time.Second))
	const duration = 2 * time.Second
	start := time.Now()
	sent := 0
	msg := make([]byte, frame-42)
	for time.Since(start) < duration {
		for i := 0; i < 10; i++ {
			if _, err := tx.Write(msg); err != nil {
				t.Fatal(err)
			}
			sent++
		}
		if d := time.Until(start.Add(time.Duration(sent) * interval)); d > 0 {
			time.Sleep(d)
		}
	}
	offered := float64(sent*frame*8) / time.Since(start).Seconds()
	waitDrained(t, l, from)
	r.stop()
	if r.unstamped > 0 {
		t.Errorf("%d datagrams came without the kernel's receive stamp", r.unstamped)
	}
	if len(arrived) < 100 {
		t.Fatalf("%s -> %s: only %d of %d datagrams arrived", from, to, len(arrived), sent)
	}
	got := float64(frame*8) / slope(arrived).Seconds()
	span := float64((len(arrived)-1)*frame*8) / arrived[len(arrived)-1].Sub(arrived[0]).Seconds()
	want := float64(rateBytes * 8)
	t.Logf("%s -> %s: offered %.2f Mbit/s (%d datagrams), %d arrived at %.3f Mbit/s in frame bytes (%.3f over the whole span); configured %.3f Mbit/s",
		from, to, offered/1e6, sent, len(arrived), got/1e6, span/1e6, want/1e6)
	if offered < 1.3*want {
		t.Fatalf("the sender offered only %.2f Mbit/s, not enough to overdrive a %.2f Mbit/s link; the measurement says nothing", offered/1e6, want/1e6)
	}
	if got < 0.85*want || got > 1.05*want {
		t.Errorf("%s -> %s: arrival rate %.3f Mbit/s is outside 0.85-1.05 of the configured %.3f Mbit/s", from, to, got/1e6, want/1e6)
	}
}

// TestNetemAsymmetric: a profile with per-direction options puts each
// direction's own delay, rate and limit on the end whose egress it is,
// read back from the kernel, and each direction carries its own rate
// (measured on the same profile with a limit of 1000, see
// checkArrivalRate). The expectations are written out here from the
// definitions (a direction's default limit is
// ceil(rate_mbit * 2 * delay_ms / 8) + 10), not computed by shapedlink.
func TestNetemAsymmetric(t *testing.T) {
	tpu, err := ticksPerMicrosecond()
	if err != nil {
		t.Fatal(err)
	}
	const profile = "40:10,down.delay=30,up.delay=10,up.rate=2"
	want := map[end]netemParams{
		serverEnd: {Delay: 30 * time.Millisecond, RateBytes: 1_250_000, Limit: 85}, // 10 * 60 / 8 = 75, + 10
		clientEnd: {Delay: 10 * time.Millisecond, RateBytes: 250_000, Limit: 15},   // 2 * 20 / 8 = 5, + 10
	}
	l := newLink(t, profile)
	for _, e := range []end{serverEnd, clientEnd} {
		n, _, err := netemStats(l, e)
		if err != nil {
			t.Fatalf("%s end: %v", e, err)
		}
		w := want[e]
		gotDelay := time.Duration(float64(n.Latency) / tpu * float64(time.Microsecond))
		if d := gotDelay - w.Delay; d < -time.Microsecond || d > time.Microsecond {
			t.Errorf("%s end: delay %v, want %v", e, gotDelay, w.Delay)
		}
		if n.Rate64 != w.RateBytes || n.Limit != w.Limit || n.Loss != 0 {
			t.Errorf("%s end: rate %d B/s, limit %d, loss %d; want rate %d B/s, limit %d, no loss", e, n.Rate64, n.Limit, n.Loss, w.RateBytes, w.Limit)
		}
		checkApplied(t, l, e, w)
	}
	deep := newLink(t, "40:10@1000,down.delay=30,up.delay=10,up.rate=2")
	checkArrivalRate(t, deep, serverEnd, clientEnd, 7410, want[serverEnd].RateBytes)
	checkArrivalRate(t, deep, clientEnd, serverEnd, 7411, want[clientEnd].RateBytes)
}

// setUDPSegment sets UDP_SEGMENT on c so that each write of several
// segments travels as one GSO super-packet until the device segments it.
func setUDPSegment(c *net.UDPConn, segment int) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_UDP, unix.UDP_SEGMENT, segment)
	}); err != nil {
		return err
	}
	return serr
}

// startSampler starts shapedlink's queue sampler on end e and returns a
// function that stops it and returns the samples. The sampler is also
// stopped when the test ends (before the link is closed), so a failing test
// does not leave it polling a vanished device.
func startSampler(t *testing.T, l vmLink, e end, every time.Duration) func() []shapedlink.QueueSample {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var samples []shapedlink.QueueSample
	var serr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		samples, serr = l.sample(ctx, e, every)
	}()
	var once sync.Once
	stop := func() []shapedlink.QueueSample {
		once.Do(func() {
			cancel()
			<-done
			if serr != nil {
				t.Errorf("sampling the %s end's queue: %v", e, serr)
			}
		})
		return samples
	}
	t.Cleanup(func() { stop() })
	return stop
}

// checkSlots runs gsocheck.FromQueue on queue samples and checks the
// outcome against what the sender did, in a way that survives torn
// samples (a statistics dump whose packet and byte counts were read at
// different moments: under TCG a few per thousand read up to 1576 bytes
// per 1442-byte slot with GSO verifiably off; docs/shapedlink.md,
// "Segmentation offload"). So it judges by the median bytes per slot and
// the share of oversize samples: with offload off the median is at most
// one datagram and at most 2% of the occupied samples exceed it; with
// offload on the median is at least two datagrams. gsocheck's own verdict
// is logged, and required only to be on when offload is on.
func checkSlots(t *testing.T, name string, samples []shapedlink.QueueSample, want int, on bool) {
	t.Helper()
	gs := make([]gsocheck.Sample, len(samples))
	over := 0
	for i, s := range samples {
		gs[i] = gsocheck.Sample{At: s.At, Packets: s.Packets, Bytes: s.Bytes}
		if s.Packets >= 2 && s.Bytes > s.Packets*want {
			over++
		}
	}
	r, err := gsocheck.FromQueue(gs, want, gsocheck.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: queue: %d of %d samples occupied, %d of them above one datagram; bytes per slot: pooled mean %.1f, median %.1f, max %.0f (one datagram = %d); gsocheck.FromQueue verdict %s",
		name, r.Used, r.Total, over, r.PooledMean, r.Median, r.Max, want, r.Verdict)
	if r.Used < gsocheck.DefaultMinSamples {
		t.Fatalf("only %d occupied samples: the sender did not build a queue, so the check says nothing", r.Used)
	}
	if on {
		if r.Verdict != gsocheck.On {
			t.Errorf("gsocheck verdict %s with offload on, want on (%s)", r.Verdict, r.Reason)
		}
		if r.Median < float64(2*want) {
			t.Errorf("median %.0f bytes per slot with offload on, want at least two datagrams (%d)", r.Median, 2*want)
		}
		return
	}
	if r.Median > float64(want) {
		t.Errorf("median %.0f bytes per slot with offload off, want at most one datagram (%d)", r.Median, want)
	}
	if frac := float64(over) / float64(r.Used); frac > 0.02 {
		t.Errorf("%d of %d occupied samples (%.1f%%) held more than one datagram per slot with offload off; torn samples explain at most 2%%", over, r.Used, 100*frac)
	}
	if r.Verdict != gsocheck.Off {
		t.Logf("%s: gsocheck's verdict is %s only because of torn samples (see checkSlots): max %.0f, median %.0f", name, r.Verdict, r.Max, r.Median)
	}
}

// TestNetemGSOCheck runs the offload check both ways on a netem queue.
// A plain UDP sender of 1400-byte datagrams on shapedlink's link occupies
// exactly one datagram (1442 bytes with headers) per queue slot: verdict
// off. The deliberately wrong control turns transmit checksum offload back
// on for the client's veth (shapedlink pins it off, and UDP_SEGMENT cannot
// work without it: the write fails with EIO) and writes 10 segments at a
// time with UDP_SEGMENT: each super-packet takes one netem slot and is
// segmented only after the qdisc, so slots hold about ten datagrams:
// verdict on. The control is what shows the check can fail. The nftables
// egress counters, which see packets before the qdisc, must agree: no
// oversize packet from the plain sender, many from the control.
func TestNetemGSOCheck(t *testing.T) {
	const payload = 1400
	want := gsocheck.Expected(payload, 14)
	for _, tc := range []struct {
		name     string
		segments int // datagrams per write; 1 = plain sender
		verdict  gsocheck.Verdict
	}{{"plain", 1, gsocheck.Off}, {"udp_segment_control", 10, gsocheck.On}} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLink(t, "40:10")
			rx, err := listenUDP(l, serverEnd, 7300)
			if err != nil {
				t.Fatal(err)
			}
			k := countUDP(rx)
			defer k.stop()
			tx, err := dialUDP(l, clientEnd, serverEnd, 7300)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Close()
			if tc.segments > 1 {
				if err := l.Do(clientEnd, func() error { return setTxChecksum(l.Dev(clientEnd), true) }); err != nil {
					t.Fatalf("turning tx checksum offload back on for the control: %v", err)
				}
				if err := setUDPSegment(tx, payload); err != nil {
					t.Fatalf("setsockopt UDP_SEGMENT: %v", err)
				}
			}
			before, err := l.Instruments().EgressCounters(clientEnd)
			if err != nil {
				t.Fatal(err)
			}
			stop := startSampler(t, l, clientEnd, 2*time.Millisecond)
			// About twice the link's rate, so a queue builds.
			writes := 600 / tc.segments
			msg := make([]byte, payload*tc.segments)
			for i := 0; i < writes; i++ {
				if _, err := tx.Write(msg); err != nil {
					if errors.Is(err, syscall.EIO) && tc.segments > 1 {
						t.Fatalf("UDP_SEGMENT write failed with EIO: checksum offload is off on the device, so the control cannot run: %v", err)
					}
					t.Fatal(err)
				}
				if (i+1)%max(1, 10/tc.segments) == 0 {
					time.Sleep(5 * time.Millisecond)
				}
			}
			time.Sleep(100 * time.Millisecond)
			samples := stop()
			after, err := l.Instruments().EgressCounters(clientEnd)
			if err != nil {
				t.Fatal(err)
			}
			checkSlots(t, tc.name, samples, want, tc.verdict == gsocheck.On)
			c := gsocheck.Counters{
				Packets:  after.All.Packets - before.All.Packets,
				Bytes:    after.All.Bytes - before.All.Bytes,
				Oversize: after.Oversize.Packets - before.Oversize.Packets,
			}
			cr := gsocheck.FromCounters(c, want, 100)
			t.Logf("%s: egress counters: %d packets, %d bytes, %d oversize; verdict %s: %s", tc.name, c.Packets, c.Bytes, c.Oversize, cr.Verdict, cr.Reason)
			if cr.Verdict != tc.verdict {
				t.Errorf("egress-counter verdict %s, want %s", cr.Verdict, tc.verdict)
			}
		})
	}
}

// TestNetemGilbertElliott: a Gilbert-Elliott loss option reaches Debian's
// netem as its loss model on the server end only (read back into the
// applied line in tc's words), and 4000 datagrams sent across it are lost
// at the model's mean rate in bursts of its mean length: p 5%, r 25%
// gives 5/30 = 16.7% lost in bursts of 4. Bounds are about five standard
// errors. The limit (4000) holds every datagram, so that only the loss
// model drops: netem's timers, late on a loaded host, hold more than the
// 20 datagrams of the delay line, which the default limit of 35 would cut.
func TestNetemGilbertElliott(t *testing.T) {
	const profile = "20:10@4000,down.loss=ge:5/25"
	l := newLink(t, profile)
	down, up := appliedLines(l)
	if !strings.Contains(down, "loss gemodel p 5% r 25% 1-h 100% 1-k 0%") || strings.Contains(up, "loss") {
		t.Fatalf("applied %q and %q, want the GE model on the server end only", down, up)
	}
	rx, err := listenUDP(l, clientEnd, 7420)
	if err != nil {
		t.Fatal(err)
	}
	const n = 4000
	got := make(chan []bool, 1)
	go func() {
		seen := make([]bool, n)
		buf := make([]byte, 64)
		for {
			k, err := rx.Read(buf)
			if err != nil {
				got <- seen
				return
			}
			if k >= 4 {
				if i := int(binary.BigEndian.Uint32(buf)); i < n {
					seen[i] = true
				}
			}
		}
	}()
	tx, err := dialUDP(l, serverEnd, clientEnd, 7420)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	msg := make([]byte, 64)
	// 0.5 ms apart on average, in bursts of 50 (few wake-ups, which a
	// busy host delays): far below the rate.
	pace := newPacer(25*time.Millisecond, 25*time.Millisecond)
	for i := 0; i < n; i++ {
		if i%50 == 0 {
			pace.wait()
		}
		binary.BigEndian.PutUint32(msg, uint32(i))
		if _, err := tx.Write(msg); err != nil {
			t.Fatal(err)
		}
	}
	waitDrained(t, l, serverEnd)
	rx.Close()
	seen := <-got
	lost, bursts, run := 0, 0, 0
	for _, ok := range seen {
		if !ok {
			lost++
			run++
		} else if run > 0 {
			bursts++
			run = 0
		}
	}
	if run > 0 {
		bursts++
	}
	loss, burst := float64(lost)/n, float64(lost)/float64(max(bursts, 1))
	t.Logf("lost %d of %d (%.1f%%) in %d bursts, mean burst %.2f; want 16.7%% in bursts of 4 (the sender skipped %d slots after stalls)", lost, n, 100*loss, bursts, burst, pace.skipped)
	if loss < 0.10 || loss > 0.24 {
		t.Errorf("lost %.1f%%, want about 16.7%% (10-24%%)", 100*loss)
	}
	if burst < 2.8 || burst > 5.5 {
		t.Errorf("mean burst %.2f, want about 4 (2.8-5.5)", burst)
	}
}

// TestNetemJitter: down.jitter=40 on a profile with a 50 ms down delay and
// a 10 ms up delay reaches Debian's netem as "delay 50ms 40ms" on the
// server end only, and one-way delays server to client are 50 ms plus a
// uniform draw from [-40, 40) ms, by a Kolmogorov-Smirnov test at the 0.1%
// level over 200 probes, one at a time so no queue forms (see
// jitterAgainstControl: the late timers of a loaded host are allowed for
// by the probes the other way in the same rounds, not by a fixed shift).
func TestNetemJitter(t *testing.T) {
	const profile = "20:10,down.delay=50,down.jitter=40"
	l := newLink(t, profile)
	down, up := appliedLines(l)
	if !strings.Contains(down, "delay 50ms 40ms") || !strings.Contains(up, "delay 10ms rate") {
		t.Fatalf("applied %q and %q, want 50ms with 40ms of jitter down and a plain 10ms up", down, up)
	}
	n, _, err := netemStats(l, serverEnd)
	if err != nil {
		t.Fatal(err)
	}
	tpu, err := ticksPerMicrosecond()
	if err != nil {
		t.Fatal(err)
	}
	if got := time.Duration(float64(n.Jitter) / tpu * float64(time.Microsecond)); got < 40*time.Millisecond-time.Microsecond || got > 40*time.Millisecond+time.Microsecond {
		t.Errorf("server end jitter reads back as %v (%d ticks), want 40ms", got, n.Jitter)
	}
	uniform := func(ms float64) float64 { return math.Min(1, math.Max(0, (ms+40)/80)) }
	jitterAgainstControl(t, l, 7430, 200, 50*time.Millisecond, 10*time.Millisecond, uniform, "uniform on [-40, 40) ms")
}

// jitterAgainstControl sends n rounds of one probe each way (oneWayRounds)
// and tests, by Kolmogorov-Smirnov at the 0.1% level (ksControl), that
// the one-way delays server to client are downDelay plus a jitter whose
// distribution function (of milliseconds) is cdf, plus what delayed the
// probes client to server (which have no jitter) beyond upDelay in the
// same rounds: late timers and the ends' writes, which a loaded host
// stretches and which only ever add.
func jitterAgainstControl(t *testing.T, l vmLink, port, n int, downDelay, upDelay time.Duration, cdf func(float64) float64, what string) {
	t.Helper()
	ds := oneWayRounds(t, l, port, n, 0)
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	down := make([]float64, n)
	late := make([]float64, n)
	for i := range n {
		down[i] = ms(ds[0][i])
		late[i] = ms(ds[1][i] - upDelay)
	}
	d, one, crit := ksControl(down, late, ms(downDelay), cdf)
	t.Logf("one-way delays server to client %.2f to %.2f ms (median %.2f); client to server, the control, %.2f to %.2f ms over its %v (median %.2f)",
		down[0], down[n-1], down[n/2], late[0], late[n-1], upDelay, late[n/2])
	t.Logf("KS distance from %v plus jitter %s plus the control's lateness: %.4f (critical %.4f: %.4f one-sample, %.4f for the control)", downDelay, what, d, crit, one, crit-one)
	if d > crit {
		t.Errorf("KS distance %.4f above %.4f: the delays server to client are not %v plus a jitter %s (plus the lateness the probes the other way met)", d, crit, downDelay, what)
	}
}

// ksControl is the Kolmogorov-Smirnov distance of the sample x (sorted
// in place) from delay plus a draw of cdf plus one of the lateness
// sample late (sorted in place): the expected distribution function is
// the mean over late of cdf shifted by each, so no allowance for
// lateness is needed. It returns the distance, the critical value at the
// 0.1% level, and the one-sample part of that value.
//
// The critical value is the one-sample one, 1.95/sqrt(n), plus a bound on
// how far the expected function, estimated from the m lateness values,
// can be from the true one: a mean of m terms in [0, 1] whose variance at
// x is v(x), so 3.9 sqrt(max v / m). Small lateness against the jitter
// leaves it as sharp as a one-sample test.
func ksControl(x, late []float64, delay float64, cdf func(float64) float64) (d, one, crit float64) {
	sort.Float64s(x)
	sort.Float64s(late)
	n, m := float64(len(x)), float64(len(late))
	var vmax float64
	for i, xi := range x {
		var f, f2 float64
		for _, lk := range late {
			g := cdf(xi - delay - lk)
			f += g
			f2 += g * g
		}
		f, f2 = f/m, f2/m
		vmax = max(vmax, f2-f*f)
		d = max(d, math.Abs(f-float64(i)/n), math.Abs(f-float64(i+1)/n))
	}
	one = 1.95 / math.Sqrt(n)
	return d, one, one + 3.9*math.Sqrt(vmax/m)
}

// appliedLines splits l.Applied() into the server end's line (the down
// direction) and the client end's (up), for either backend.
func appliedLines(l vmLink) (down, up string) {
	for _, a := range l.Applied() {
		// netem's lines read "server -> client qbsrv0: ...", the
		// emulator's "server qbsrv0 -> client: ...".
		if strings.Contains(a, l.Dev(serverEnd)) {
			down = a
		} else {
			up = a
		}
	}
	return down, up
}
