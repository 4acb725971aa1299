package shapedlink

import (
	"encoding/binary"
	"math"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestAsymmetricEmulator: a link of 50 Mbit/s down and 5 Mbit/s up, with
// 5 ms down and 15 ms up, is applied per direction by the emulator and
// carries each direction's rate, measured at the wire by the shaper's
// own count while UDP saturates both directions at once.
func TestAsymmetricEmulator(t *testing.T) {
	l := newTestLink(t, "20:50,down.delay=5,up.delay=15,up.rate=5", BackendEmulator)
	a := l.Applied()
	if len(a) != 2 || !strings.Contains(a[0], "delay 5ms rate 50Mbit") || !strings.Contains(a[1], "delay 15ms rate 5Mbit") {
		t.Fatalf("applied %q, want server->client at 5ms and 50Mbit, client->server at 15ms and 5Mbit", a)
	}
	srv, cli := udpPair(t, l)
	fwd := func() (down, up uint64) {
		sh, ok := l.Instruments().ShaperStats()
		if !ok {
			t.Fatal("no shaper statistics")
		}
		return sh.Directions[0].ForwardedBytes, sh.Directions[1].ForwardedBytes
	}
	// Offer about twice each rate in 1000-byte datagrams for 1.5 s and
	// read the shaper's forwarded bytes over the last second.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	send := func(c *net.UDPConn, to *net.UDPAddr, mbit float64) {
		defer wg.Done()
		msg := make([]byte, 1000)
		gap := time.Duration(float64(len(msg)*8) / (2 * mbit * 1e6) * 1e9)
		next := time.Now()
		for {
			select {
			case <-stop:
				return
			default:
			}
			_, _ = c.WriteToUDP(msg, to)
			next = next.Add(gap)
			if d := time.Until(next); d > 0 {
				time.Sleep(d)
			}
		}
	}
	wg.Add(2)
	go send(srv, cli.LocalAddr().(*net.UDPAddr), 50)
	go send(cli, srv.LocalAddr().(*net.UDPAddr), 5)
	time.Sleep(500 * time.Millisecond)
	d0, u0 := fwd()
	t0 := time.Now()
	time.Sleep(time.Second)
	d1, u1 := fwd()
	el := time.Since(t0).Seconds()
	close(stop)
	wg.Wait()
	down, up := float64(d1-d0)*8/el/1e6, float64(u1-u0)*8/el/1e6
	t.Logf("at the wire: down %.2f Mbit/s, up %.2f Mbit/s", down, up)
	if down < 0.9*50 || down > 1.01*50 {
		t.Errorf("down carried %.2f Mbit/s, want 45-50.5 (the down rate, 50)", down)
	}
	if up < 0.9*5 || up > 1.01*5 {
		t.Errorf("up carried %.2f Mbit/s, want 4.5-5.05 (the up rate, 5)", up)
	}
}

// TestGilbertElliottEmulator: a down direction with Gilbert-Elliott loss
// (p 2%, r 25%: 7.4% mean loss in bursts of 4) loses, on the emulator,
// that share of 20000 datagrams in bursts of that mean length, measured
// from the sequence numbers that arrive; the up direction loses nothing.
func TestGilbertElliottEmulator(t *testing.T) {
	l := newTestLink(t, "2:100@2000,down.loss=ge:2/25", BackendEmulator)
	if a := l.Applied(); !strings.Contains(a[0], "loss gemodel p 2% r 25% 1-h 100% 1-k 0%") || strings.Contains(a[1], "loss") {
		t.Fatalf("applied %q, want the GE model on server->client only", a)
	}
	srv, cli := udpPair(t, l)
	// A reader starved of CPU (the whole suite runs at once) must not
	// lose datagrams in its socket: 8 MiB holds 0.4 s of this stream.
	if rc, err := cli.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) {
			if unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20) != nil {
				_ = cli.SetReadBuffer(8 << 20)
			}
		})
	}
	const n = 20000
	got := make(chan []bool, 1)
	go func() {
		seen := make([]bool, n)
		buf := make([]byte, 64)
		for {
			// No deadline while sending: a reader starved of CPU must
			// not stop early and count the rest as a burst of losses.
			k, _, err := cli.ReadFromUDP(buf)
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
	msg := make([]byte, 64)
	start := time.Now()
	for i := 0; i < n; i++ {
		binary.BigEndian.PutUint32(msg, uint32(i))
		// 50 us apart: no queue builds (a frame takes 8 us at 100 Mbit/s)
		// and the limit (2000) is never reached, so only GE loses frames.
		for time.Since(start) < time.Duration(i)*50*time.Microsecond {
		}
		if _, err := srv.WriteToUDP(msg, cli.LocalAddr().(*net.UDPAddr)); err != nil {
			t.Fatal(err)
		}
	}
	// Everything sent has left the link a few milliseconds later; then
	// the reader stops at the deadline.
	_ = cli.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	seen := <-got
	lost, bursts, run := 0, 0, 0
	for _, ok := range seen {
		if !ok {
			lost++
			run++
			continue
		}
		if run > 0 {
			bursts++
			run = 0
		}
	}
	if run > 0 {
		bursts++
	}
	sh, _ := l.Instruments().ShaperStats()
	if d := sh.Directions[0]; d.LimitDrops != 0 || d.SocketDrops != 0 || d.LossDrops != uint64(lost) {
		t.Errorf("shaper: %d loss drops, %d limit drops, %d socket drops; want exactly the %d missing datagrams, all from the loss model", d.LossDrops, d.LimitDrops, d.SocketDrops, lost)
	}
	loss := float64(lost) / n
	burst := float64(lost) / float64(max(bursts, 1))
	t.Logf("lost %d of %d (%.2f%%) in %d bursts, mean burst %.2f", lost, n, 100*loss, bursts, burst)
	// Mean loss 2/27 = 7.41%; bursts geometric with mean 4. Bounds are
	// about five standard errors at this sample size.
	if loss < 0.05 || loss > 0.10 {
		t.Errorf("lost %.2f%%, want about 7.4%% (5-10%%)", 100*loss)
	}
	if burst < 3.2 || burst > 4.8 {
		t.Errorf("mean burst %.2f datagrams, want about 4 (3.2-4.8)", burst)
	}
}

// ksUniform is the Kolmogorov-Smirnov distance between the sample xs
// (sorted in place) and the uniform distribution on [lo, hi).
func ksUniform(xs []float64, lo, hi float64) float64 {
	slices.Sort(xs)
	n := float64(len(xs))
	var d float64
	for i, x := range xs {
		f := min(1, max(0, (x-lo)/(hi-lo)))
		d = max(d, math.Abs(f-float64(i)/n), math.Abs(f-float64(i+1)/n))
	}
	return d
}

// TestJitterEmulator: with down.delay=30,down.jitter=25, the emulator's
// one-way delays server to client are uniform on [5, 55) ms, by a
// Kolmogorov-Smirnov test at the 0.1% level over 200 datagrams sent one
// at a time so no queue forms. Each is timed from just before its write
// to the kernel's receive stamp, so the ends' scheduling on a busy host
// stays out of the figure; the emulator's own lateness stays in.
func TestJitterEmulator(t *testing.T) {
	l := newTestLink(t, "20:100,down.delay=30,down.jitter=25", BackendEmulator)
	if a := l.Applied(); !strings.Contains(a[0], "delay 30ms jitter 25ms") || strings.Contains(a[1], "jitter") {
		t.Fatalf("applied %q, want jitter on server->client only", a)
	}
	srv, cli := udpPair(t, l)
	const n = 200
	ds := oneWayDelays(t, srv, cli, n)
	d, crit := ksUniform(ds, 5, 55), 1.95/math.Sqrt(n)
	t.Logf("one-way delays %.2f to %.2f ms, KS distance from uniform [5, 55) ms %.4f (critical %.4f)", ds[0], ds[n-1], d, crit)
	if d > crit {
		t.Errorf("KS distance %.4f above %.4f: the delays are not uniform on [5, 55) ms", d, crit)
	}
}

// oneWayDelays sends n datagrams from srv to cli one at a time and
// returns each one's delay in milliseconds, from just before its write to
// the kernel's receive stamp (SO_TIMESTAMPNS): the ends' scheduling
// delays are left out, the link's and the emulator's are kept.
func oneWayDelays(t *testing.T, srv, cli *net.UDPConn, n int) []float64 {
	t.Helper()
	stampReceives(t, cli)
	out := make([]float64, 0, n)
	msg, buf, oob := make([]byte, 12), make([]byte, 64), make([]byte, 128)
	to := cli.LocalAddr().(*net.UDPAddr)
	for i := range n {
		binary.BigEndian.PutUint32(msg, uint32(i))
		sent := time.Now()
		binary.BigEndian.PutUint64(msg[4:], uint64(sent.UnixNano()))
		if _, err := srv.WriteToUDP(msg, to); err != nil {
			t.Fatal(err)
		}
		_ = cli.SetReadDeadline(time.Now().Add(2 * time.Second))
		for {
			k, oobn, _, _, err := cli.ReadMsgUDP(buf, oob)
			if err != nil {
				t.Fatalf("datagram %d did not arrive: %v", i, err)
			}
			if k < 12 || binary.BigEndian.Uint32(buf) != uint32(i) {
				continue
			}
			at := kernelStamp(oob[:oobn])
			if at.IsZero() {
				t.Fatalf("datagram %d came without a kernel receive stamp", i)
			}
			out = append(out, float64(at.UnixNano()-int64(binary.BigEndian.Uint64(buf[4:])))/1e6)
			break
		}
	}
	slices.Sort(out)
	return out
}

// TestDupReorderEmulator: the emulator's forwarding loop delivers the
// model's duplicates as real second copies and sends reordered frames
// ahead of the delayed ones: with down.dup=20,down.reorder=25 on a 30 ms
// down delay, of 4000 datagrams 50 us apart a fifth arrive twice, and the
// reordered ones arrive under half the delay after they were sent (both
// ends timed by one clock). The shaper's counters agree with what
// arrived. Bounds are about five standard errors.
func TestDupReorderEmulator(t *testing.T) {
	l := newTestLink(t, "60:100,down.delay=30,down.dup=20,down.reorder=25", BackendEmulator)
	if a := l.Applied(); !strings.Contains(a[0], "duplicate 20% reorder 25% gap 1") || strings.Contains(a[1], "duplicate") {
		t.Fatalf("applied %q, want duplication and reordering on server->client only", a)
	}
	srv, cli := udpPair(t, l)
	if err := cli.SetReadBuffer(8 << 20); err != nil {
		t.Fatal(err)
	}
	const n = 4000
	type arrival struct{ copies, early int }
	got := make(chan []arrival, 1)
	base := time.Now()
	// Arrivals are timed by the kernel's receive stamp, so a reader that a
	// busy host runs late does not make a reordered datagram look delayed.
	stampReceives(t, cli)
	go func() {
		seen := make([]arrival, n)
		buf, oob := make([]byte, 64), make([]byte, 128)
		for {
			k, oobn, _, _, err := cli.ReadMsgUDP(buf, oob)
			if err != nil {
				got <- seen
				return
			}
			at := kernelStamp(oob[:oobn])
			if at.IsZero() {
				at = time.Now()
			}
			if k >= 12 {
				if i := int(binary.BigEndian.Uint32(buf)); i < n {
					seen[i].copies++
					if at.Sub(base)-time.Duration(binary.BigEndian.Uint64(buf[4:])) < 15*time.Millisecond {
						seen[i].early++
					}
				}
			}
		}
	}()
	msg := make([]byte, 64)
	next := time.Now()
	for i := 0; i < n; i++ {
		for time.Now().Before(next) {
		}
		// After a stall (a loaded host descheduled the sender) go on at
		// the pace rather than catch up in a burst the limit cannot hold.
		if now := time.Now(); now.Sub(next) > time.Millisecond {
			next = now
		}
		next = next.Add(50 * time.Microsecond)
		binary.BigEndian.PutUint32(msg, uint32(i))
		binary.BigEndian.PutUint64(msg[4:], uint64(time.Since(base)))
		if _, err := srv.WriteToUDP(msg, cli.LocalAddr().(*net.UDPAddr)); err != nil {
			t.Fatal(err)
		}
	}
	// Read until the shaper holds nothing more (a busy host may deliver
	// well after the 30 ms delay), then a little longer for the last ones.
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if sh, ok := l.Instruments().ShaperStats(); ok && sh.Directions[0].Received >= n && sh.Directions[0].Packets == 0 {
			break
		}
	}
	time.Sleep(50 * time.Millisecond)
	_ = cli.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	seen := <-got
	twice, early, missing := 0, 0, 0
	for _, a := range seen {
		switch {
		case a.copies == 0:
			missing++
		case a.copies >= 2:
			twice++
		}
		if a.early > 0 {
			early++
		}
	}
	sh, _ := l.Instruments().ShaperStats()
	d := sh.Directions[0]
	t.Logf("%d twice, %d early, %d missing; shaper: %d duplicated, %d reordered, %d forwarded", twice, early, missing, d.Duplicates, d.Reordered, d.Forwarded)
	if missing != 0 || d.LimitDrops != 0 || d.SocketDrops != 0 {
		t.Errorf("%d datagrams missing (%d limit drops, %d socket drops); duplication and reordering lose nothing", missing, d.LimitDrops, d.SocketDrops)
	}
	if s := float64(twice) / n; s < 0.17 || s > 0.23 || uint64(twice) != d.Duplicates {
		t.Errorf("%.1f%% arrived twice (shaper duplicated %d); want 20%%, all counted", 100*s, d.Duplicates)
	}
	// A datagram is early if either copy was reordered: 1-(0.75*0.75) for
	// the duplicated fifth, 0.25 for the rest.
	want := 0.8*0.25 + 0.2*(1-0.75*0.75)
	if s := float64(early) / n; math.Abs(s-want) > 0.035 {
		t.Errorf("%.1f%% arrived early, want %.1f%%", 100*s, 100*want)
	}
}

// TestJitterNormalEmulator: down.jitter=10/normal on a 50 ms down delay
// makes the emulator's one-way delays server to client normal with mean
// 50 ms and standard deviation 10 ms (the table stops at 4 sigma, beyond
// any of 300 datagrams' reach): Kolmogorov-Smirnov at the 0.1% level over
// 300 datagrams, one at a time, timed as TestJitterEmulator's are. The
// emulator's late wake-ups only ever add, so the test takes the location
// from the median (which must be no more than 5 ms above the configured
// mean) and checks the shape.
func TestJitterNormalEmulator(t *testing.T) {
	l := newTestLink(t, "20:100,down.delay=50,down.jitter=10/normal", BackendEmulator)
	if a := l.Applied(); !strings.Contains(a[0], "delay 50ms jitter 10ms distribution normal") {
		t.Fatalf("applied %q, want a normal jitter on server->client", a)
	}
	srv, cli := udpPair(t, l)
	const n = 300
	ds := oneWayDelays(t, srv, cli, n)
	shift := ds[n/2] - 50
	var d float64
	for i, x := range ds {
		f := 0.5 * math.Erfc(-(x-50-shift)/10/math.Sqrt2)
		d = max(d, math.Abs(f-float64(i)/n), math.Abs(f-float64(i+1)/n))
	}
	crit := 1.95 / math.Sqrt(n)
	t.Logf("one-way delays %.2f to %.2f ms, median %.2f ms above 50; KS distance from N(median, 10) %.4f (critical %.4f)", ds[0], ds[n-1], shift, d, crit)
	if shift < -1 || shift > 5 || d > crit {
		t.Errorf("median %.2f ms off 50 ms, KS distance %.4f (critical %.4f): the delays are not N(50 ms, 10 ms)", shift, d, crit)
	}
}
