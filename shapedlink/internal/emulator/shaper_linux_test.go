package emulator

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

func echoServer(t *testing.T, c *net.UDPConn) {
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := c.ReadFromUDP(buf)
			if err != nil {
				return
			}
			_, _ = c.WriteToUDP(buf[:n], from)
		}
	}()
}

// rtts sends n small echoes, one outstanding at a time, and returns the
// round trips of those answered.
func rtts(t *testing.T, c *net.UDPConn, to *net.UDPAddr, n int) []time.Duration {
	t.Helper()
	var out []time.Duration
	buf := make([]byte, 2048)
	msg := make([]byte, 64)
	for i := 0; i < n; i++ {
		copy(msg, strconv.Itoa(i)+" ")
		start := time.Now()
		if _, err := c.WriteToUDP(msg, to); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		for {
			m, _, err := c.ReadFromUDP(buf)
			if err != nil {
				break // lost; go on
			}
			if string(buf[:m]) == string(msg) {
				out = append(out, time.Since(start))
				break
			}
		}
	}
	return out
}

func TestReachableWithDelay(t *testing.T) {
	tp := newTopo(t)
	mon := tp.shaper(t, Config{
		AToB: Direction{Delay: 10 * time.Millisecond, RateMbit: 100, Limit: 1000},
		BToA: Direction{Delay: 15 * time.Millisecond, RateMbit: 100, Limit: 1000},
	})
	if p := mon.Priority(); p != "SCHED_FIFO 1, nice 0 (inherited), memory locked" {
		t.Errorf("Priority() = %q as root; want SCHED_FIFO applied and the memory locked", p)
	}
	// The lock in effect: the kernel counts locked memory in VmLck.
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", mon.PID())); err != nil {
		t.Error(err)
	} else if m := regexp.MustCompile(`VmLck:\s+(\d+) kB`).FindSubmatch(st); m == nil || string(m[1]) == "0" {
		t.Errorf("the shaper's /proc status shows no locked memory: %q", m)
	}
	srv := listenUDP(t, tp.srv, tp.srvIP)
	echoServer(t, srv)
	cli := listenUDP(t, tp.cli, tp.cliIP)
	// The control: the same echo over loopback from an echo server that
	// holds each reply for the link's delay, taken in turn with the link's
	// so that both see the same load (the ends' wake-ups after sleeping
	// that long are most of what a loaded host adds).
	loopback := func() *net.UDPConn {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	ctlSrv, ctlCli := loopback(), loopback()
	go func() {
		buf := make([]byte, 2048)
		for {
			n, from, err := ctlSrv.ReadFromUDP(buf)
			if err != nil {
				return
			}
			time.Sleep(25 * time.Millisecond)
			_, _ = ctlSrv.WriteToUDP(buf[:n], from)
		}
	}()
	var got, ctl []time.Duration
	for range 60 {
		got = append(got, rtts(t, cli, srv.LocalAddr().(*net.UDPAddr), 1)...)
		ctl = append(ctl, rtts(t, ctlCli, ctlSrv.LocalAddr().(*net.UDPAddr), 1)...)
	}
	if len(got) < 60 || len(ctl) < 60 {
		t.Fatalf("%d and %d of 60 echoes answered on a lossless link and over loopback", len(got), len(ctl))
	}
	slices.Sort(got)
	slices.Sort(ctl)
	// 25 ms of delay plus two 106-byte frames at 100 Mbit/s (8.5 us each).
	want := 25*time.Millisecond + 17*time.Microsecond
	p50, p99, ctl50 := got[len(got)/2], got[len(got)*99/100], ctl[len(ctl)/2]
	t.Logf("configured %v; measured min %v p50 %v p99 %v max %v; the loopback control beside it p50 %v", want, got[0], p50, p99, got[len(got)-1], ctl50)
	if got[0] < want {
		t.Errorf("fastest round trip %v is shorter than the configured %v", got[0], want)
	}
	// Loose (calibrate measures the real error), and widened by twice
	// what a loaded host added to the control in the same run: the link's
	// round trip wakes from a sleep twice as often (each end and the
	// shaper once each way).
	if allow := 2*max(0, ctl50-want) + 3*time.Millisecond; p50 > want+allow {
		t.Errorf("median round trip %v is more than %v over the configured %v (3 ms and twice the loopback control's %v above it)", p50, allow, want, ctl50-want)
	}
	// The collector stays off while the shaper forwards.
	if cycles, pause, ok := mon.GC(); !ok || cycles != 0 || pause != 0 {
		t.Errorf("GC() = %d cycles, longest pause %v, reported %v after forwarding; want 0, 0, true", cycles, pause, ok)
	}
	st := mon.Snapshot()
	if st[0].Forwarded < 60 || st[1].Forwarded < 60 {
		t.Errorf("forwarded %d and %d frames, want at least 60 each way", st[0].Forwarded, st[1].Forwarded)
	}
	if d := st[0].Drops() + st[1].Drops(); d != 0 {
		t.Errorf("%d frames dropped on a lossless, unfilled link: %+v", d, st)
	}
	// As root the 8 MiB buffers are forced; the kernel reports twice that.
	for i, d := range st {
		if d.RcvBufBytes != 16<<20 || d.SndBufBytes != 16<<20 {
			t.Errorf("direction %d: shaper buffers rcvbuf %d sndbuf %d as root, want %d each", i, d.RcvBufBytes, d.SndBufBytes, 16<<20)
		}
	}
}

func binomialInterval(n int, p, z float64) (lo, hi float64) {
	sd := math.Sqrt(float64(n) * p * (1 - p))
	return float64(n)*p - z*sd, float64(n)*p + z*sd
}

func TestLossInsideBinomialInterval(t *testing.T) {
	tp := newTopo(t)
	const pct = 10.0
	mon := tp.shaper(t, Config{
		AToB: Direction{RateMbit: 1000, Delay: time.Millisecond, Limit: 10000, LossPct: pct, Seed: 12345},
		BToA: Direction{RateMbit: 1000, Delay: time.Millisecond, Limit: 10000},
	})
	srv := listenUDP(t, tp.srv, tp.srvIP)
	cli := listenUDP(t, tp.cli, tp.cliIP)
	_ = cli.SetReadBuffer(4 << 20)
	const n = 3000
	got := make(chan int)
	go func() {
		buf := make([]byte, 2048)
		k := 0
		for {
			_ = cli.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
			if _, _, err := cli.ReadFromUDP(buf); err != nil {
				got <- k
				return
			}
			k++
		}
	}()
	to := cli.LocalAddr().(*net.UDPAddr)
	msg := make([]byte, 100)
	for i := 0; i < n; i++ {
		if _, err := srv.WriteToUDP(msg, to); err != nil {
			t.Fatal(err)
		}
		if i%16 == 15 {
			time.Sleep(200 * time.Microsecond)
		}
	}
	delivered := <-got
	lo, hi := binomialInterval(n, 1-pct/100, 3.29)
	st := mon.Snapshot()
	t.Logf("%d of %d delivered, 99.9%% interval [%.0f, %.0f]; shaper: %+v", delivered, n, lo, hi, st[0])
	if float64(delivered) < lo || float64(delivered) > hi {
		t.Errorf("%d of %d delivered at %v%% loss: outside the 99.9%% binomial interval [%.0f, %.0f]", delivered, n, pct, lo, hi)
	}
	if st[0].LossDrops < uint64(n-delivered) {
		t.Errorf("shaper counted %d loss drops but %d datagrams went missing", st[0].LossDrops, n-delivered)
	}
	if st[0].LimitDrops+st[0].SocketDrops+st[0].SendErrors != 0 {
		t.Errorf("drops other than loss on an unfilled link: %+v", st[0])
	}
	if st[1].LossDrops != 0 {
		t.Errorf("BToA has no loss configured but dropped %d", st[1].LossDrops)
	}
}

func TestLimitDropsWhenFull(t *testing.T) {
	tp := newTopo(t)
	const limit = 20
	mon := tp.shaper(t, Config{
		AToB: Direction{Delay: 10 * time.Millisecond, RateMbit: 1, Limit: limit},
		BToA: Direction{Delay: 10 * time.Millisecond, RateMbit: 1, Limit: limit},
	})
	srv := listenUDP(t, tp.srv, tp.srvIP)
	cli := listenUDP(t, tp.cli, tp.cliIP)
	_ = cli.SetReadBuffer(4 << 20)
	const n = 200
	to := cli.LocalAddr().(*net.UDPAddr)
	msg := make([]byte, 1000) // 1042-byte frames: 8.3 ms each at 1 Mbit/s
	for i := 0; i < n; i++ {
		if _, err := srv.WriteToUDP(msg, to); err != nil {
			t.Fatal(err)
		}
	}
	// Wait until the shaper has judged the whole burst and sent what it
	// kept (a minute only bounds the wait).
	peak := uint64(0)
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		st := mon.Snapshot()
		peak = max(peak, st[0].Packets)
		if st[0].Received >= n && st[0].Packets == 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	// Read until every forwarded frame of ours has arrived; a quiet gap
	// ends the reading only then (or after 10 s of silence: a shortfall).
	delivered := 0
	buf := make([]byte, 2048)
	last := time.Now()
	for {
		_ = cli.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if _, _, err := cli.ReadFromUDP(buf); err == nil {
			delivered++
			last = time.Now()
			continue
		}
		st := mon.Snapshot()[0]
		if delivered >= int(st.Forwarded)-max(int(st.Received)-n, 0) || time.Since(last) > 10*time.Second {
			break
		}
	}
	st := stableSnapshot(mon)[0]
	t.Logf("burst of %d into limit %d: delivered %d, peak held %d, %+v", n, limit, delivered, peak, st)
	if st.LimitDrops == 0 {
		t.Errorf("no limit drops after a burst of %d into a %d-packet limit", n, limit)
	}
	// The burst arrives in far less than one 8.3 ms frame time, so at most
	// a frame or two can drain while it arrives. Frames that are not ours
	// (the kernel's IPv6 neighbour discovery, Received - n of them) can
	// take a place in the limit too.
	foreign := int(st.Received) - n
	if delivered < limit-foreign || delivered > limit+3 {
		t.Errorf("delivered %d of a %d burst (%d foreign frames seen), want between %d and %d", delivered, n, foreign, limit-foreign, limit+3)
	}
	if peak > limit {
		t.Errorf("held %d frames at once with limit %d", peak, limit)
	}
	// A foreign frame may still be held (Packets) when the counters are read.
	if st.LimitDrops+st.Forwarded+st.Packets != st.Received {
		t.Errorf("received %d != forwarded %d + limit drops %d + held %d", st.Received, st.Forwarded, st.LimitDrops, st.Packets)
	}
}

// stableSnapshot returns the shaper's counters once two readings 20 ms
// apart agree, so that no frame was between counters when they were read
// (the counters are read one at a time while the shaper runs).
func stableSnapshot(mon *Monitor) [2]linkspec.Counters {
	prev := mon.Snapshot()
	for {
		time.Sleep(20 * time.Millisecond)
		cur := mon.Snapshot()
		if cur == prev {
			return cur
		}
		prev = cur
	}
}

func TestBulkTCPRate(t *testing.T) {
	tp := newTopo(t)
	const rate = 20_000_000
	limit := int(math.Ceil(1.5*rate*0.010/(8*1500))) + 10
	mon := tp.shaper(t, Config{
		AToB: Direction{Delay: 5 * time.Millisecond, RateMbit: rate / 1e6, Limit: limit},
		BToA: Direction{Delay: 5 * time.Millisecond, RateMbit: rate / 1e6, Limit: limit},
	})
	var ln net.Listener
	if err := inNS(tp.cli, func() (err error) {
		ln, err = net.Listen("tcp4", net.JoinHostPort(tp.cliIP.String(), "0"))
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	type result struct {
		bytes int64
		start time.Time
		dur   time.Duration
		err   error
	}
	res := make(chan result, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			res <- result{err: err}
			return
		}
		defer c.Close()
		// Discard the first second (slow start), then measure 2 s.
		buf := make([]byte, 64<<10)
		warm := time.Now().Add(time.Second)
		var n int64
		var start time.Time
		for {
			k, err := c.Read(buf)
			now := time.Now()
			if now.After(warm) {
				if start.IsZero() {
					start = now
				} else {
					n += int64(k)
				}
				if now.Sub(start) >= 2*time.Second {
					res <- result{bytes: n, start: start, dur: now.Sub(start)}
					return
				}
			}
			if err != nil {
				res <- result{err: err}
				return
			}
		}
	}()
	var conn net.Conn
	if err := inNS(tp.srv, func() (err error) {
		conn, err = net.DialTimeout("tcp4", ln.Addr().String(), 5*time.Second)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	go func() {
		buf := make([]byte, 64<<10)
		for {
			if _, err := conn.Write(buf); err != nil {
				return
			}
		}
	}()
	// Sample how much the shaper holds, to tell when the rate was what
	// limited the transfer: beyond what the delay line holds at the rate,
	// frames wait for the rate. On a loaded machine the endpoints can
	// fail to keep the link busy, which says nothing about the shaper.
	type sample struct {
		before, at time.Time // just before and just after the reading
		bytes, fwd uint64    // held now, and forwarded so far
	}
	var samples []sample
	sampled := make(chan struct{})
	stopSampling := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopSampling:
				return
			case <-tick.C:
				before := time.Now()
				st := mon.Snapshot()[0]
				samples = append(samples, sample{before: before, at: time.Now(), bytes: st.Bytes, fwd: st.ForwardedBytes})
			}
		}
	}()
	r := <-res
	close(stopSampling)
	<-sampled
	if r.err != nil {
		t.Fatal(r.err)
	}
	inDelayLine := uint64(rate / 8 * 0.005)
	var measured, backlogged int
	var first, last sample
	for _, s := range samples {
		if s.before.Before(r.start) || s.at.After(r.start.Add(r.dur)) {
			continue
		}
		if measured == 0 {
			first = s
		}
		last = s
		measured++
		if s.bytes > inDelayLine {
			backlogged++
		}
	}
	busy := 0.0
	if measured > 0 {
		busy = float64(backlogged) / float64(measured)
	}
	goodput := float64(r.bytes*8) / r.dur.Seconds()
	// Goodput ceiling: 1448 payload bytes per 1514-byte frame (timestamps on).
	ceiling := rate * 1448.0 / 1514.0
	st := mon.Snapshot()
	t.Logf("goodput %.2f Mbit/s of %.2f Mbit/s payload ceiling (%.1f%%); rate-limited in %d of %d samples; %+v",
		goodput/1e6, ceiling/1e6, 100*goodput/ceiling, backlogged, measured, st[0])
	// The rate is checked where the shaper sends, not where the receiving
	// program reads: a receiver descheduled just before its window opens
	// reads a backlog inside it and sees more than the rate. The frames
	// the shaper sent between two readings of its counters were sent at
	// most between the first reading's start and the last one's end.
	// Likewise they were sent at least between the first reading's end
	// and the last one's start, which bounds the rate from above.
	if measured < 2 {
		t.Fatalf("only %d readings of the shaper's counters in the 2 s window", measured)
	}
	sent := float64((last.fwd - first.fwd) * 8)
	wireLo := sent / last.at.Sub(first.before).Seconds()
	wireHi := sent / last.before.Sub(first.at).Seconds()
	t.Logf("the shaper sent %.2f to %.2f Mbit/s of frames over %v", wireLo/1e6, wireHi/1e6, last.at.Sub(first.before))
	if wireLo > rate*1.02 {
		t.Errorf("the shaper sent at least %.2f Mbit/s of frames on a %.2f Mbit/s link: the rate is not enforced", wireLo/1e6, rate/1e6)
	}
	// While frames wait for the rate, the shaper must send at the rate: a
	// shaper that sends too slowly keeps a backlog and falls short here.
	// The time the endpoints left the link idle is not held against it.
	if wireHi < rate*0.7*busy {
		t.Errorf("the shaper sent at most %.2f Mbit/s of frames, under 70%% of the %.2f Mbit/s rate for the %.0f%% of the time frames waited for it",
			wireHi/1e6, rate/1e6, 100*busy)
	}
}

func TestReadyReportsMissingInterface(t *testing.T) {
	tp := newTopo(t)
	cmd, mon, err := Command(Config{IfA: "qenosuchif", IfB: tp.ifB, AToB: Direction{RateMbit: 1000, Limit: 1}, BToA: Direction{RateMbit: 1000, Limit: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := startIn(tp.shp, cmd); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = mon.Ready(ctx)
	if err == nil || !strings.Contains(err.Error(), "qenosuchif") {
		t.Errorf("Ready with a missing interface: %v; want an error naming it", err)
	}
	if err := mon.Stop(); err == nil {
		t.Error("Stop after a failed start returned no error")
	}
}

func processGone(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// The state follows the ")" that closes the command name.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X')
}

func waitGone(pid int, d time.Duration) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if processGone(pid) {
			return true
		}
	}
	return false
}

func TestKilledShaperLeavesNothing(t *testing.T) {
	tp := newTopo(t)
	cmd, mon, err := Command(Config{IfA: tp.ifA, IfB: tp.ifB, AToB: Direction{RateMbit: 1000, Limit: 10}, BToA: Direction{RateMbit: 1000, Limit: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if err := startIn(tp.shp, cmd); err != nil {
		t.Fatal(err)
	}
	if err := mon.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	pid := mon.PID()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-mon.Exited()
	err = mon.Stop()
	if err == nil {
		t.Error("Stop of a killed shaper returned no error")
	}
	if !processGone(pid) {
		t.Errorf("shaper %d still exists after SIGKILL and Stop", pid)
	}
	// Its sockets went with it: the link still carries frames unshaped?
	// No: nothing forwards now, which is what "nothing behind" means here.
	srv := listenUDP(t, tp.srv, tp.srvIP)
	echoServer(t, srv)
	cli := listenUDP(t, tp.cli, tp.cliIP)
	if got := rtts(t, cli, srv.LocalAddr().(*net.UDPAddr), 2); len(got) != 0 {
		t.Errorf("%d echoes crossed the link after the shaper was killed; something still forwards", len(got))
	}
}

func TestStopExitsCleanly(t *testing.T) {
	tp := newTopo(t)
	cmd, mon, err := Command(Config{IfA: tp.ifA, IfB: tp.ifB, AToB: Direction{RateMbit: 1000, Limit: 10}, BToA: Direction{RateMbit: 1000, Limit: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if err := startIn(tp.shp, cmd); err != nil {
		t.Fatal(err)
	}
	if err := mon.Ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	pid := mon.PID()
	if err := mon.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("shaper exit code %d after Stop, want 0", code)
	}
	if !processGone(pid) {
		t.Errorf("shaper %d still exists after Stop", pid)
	}
	if err := mon.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
}

func TestShaperDiesWithParent(t *testing.T) {
	tp := newTopo(t)
	cfg, _ := json.Marshal(Config{IfA: tp.ifA, IfB: tp.ifB, AToB: Direction{RateMbit: 1000, Limit: 10}, BToA: Direction{RateMbit: 1000, Limit: 10}})
	parent := exec.Command("/proc/self/exe", "-test.run=^$")
	parent.Env = append(os.Environ(), testParentEnv+"="+string(cfg))
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	parent.Stderr = os.Stderr
	if err := startIn(tp.shp, parent); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = parent.Process.Kill(); _ = parent.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the intermediate parent did not report a shaper pid: %q", line)
	}
	if processGone(pid) {
		t.Fatalf("shaper %d is not running before its parent is killed", pid)
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	if !waitGone(pid, 5*time.Second) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("shaper %d outlived its killed parent by 5 s", pid)
	}
}

// TestDuplicateIntoFullLimit: with every frame duplicated and the limit
// full, a full receive batch must not run the shaper out of frame
// buffers. The buffers are the limit plus one batch, so a duplicate may
// take a buffer only once the model has accepted it (the held frames then
// include it); a copy made before the verdict, of a duplicate the limit
// refuses, once found no free buffer and the shaper panicked.
func TestDuplicateIntoFullLimit(t *testing.T) {
	tp := newTopo(t)
	const limit = 8
	mon := tp.shaper(t, Config{
		AToB: Direction{Delay: 10 * time.Millisecond, RateMbit: 1, Limit: limit, DupPct: 100},
		BToA: Direction{Delay: 10 * time.Millisecond, RateMbit: 1, Limit: limit},
	})
	srv := listenUDP(t, tp.srv, tp.srvIP)
	_ = srv.SetWriteBuffer(8 << 20)
	cli := listenUDP(t, tp.cli, tp.cliIP)
	to := cli.LocalAddr().(*net.UDPAddr)
	msg := make([]byte, 200)
	// Bursts far larger than a receive batch, sent faster than the
	// shaper reads while frames are held (it defers reads by up to
	// 0.5 ms), so full batches arrive while the limit is full.
	const n = 3000
	for i := 0; i < n; i++ {
		if _, err := srv.WriteToUDP(msg, to); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-mon.Exited():
			t.Fatal("the shaper exited during a duplicated burst into a full limit (see its stderr above)")
		default:
		}
		if st := mon.Snapshot()[0]; st.Received >= n && st.Packets == 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	st := stableSnapshot(mon)[0]
	t.Logf("%+v", st)
	if st.Received < n {
		t.Fatalf("the shaper received %d of %d frames", st.Received, n)
	}
	if st.Duplicates == 0 || st.LimitDrops == 0 {
		t.Errorf("want duplicates and limit drops from a duplicated burst into a full limit, got %d and %d", st.Duplicates, st.LimitDrops)
	}
	// Every arrival and every duplicate is forwarded, dropped or held.
	if got, want := st.Forwarded+st.LimitDrops+st.Packets, st.Received+st.Duplicates; got != want {
		t.Errorf("forwarded %d + limit drops %d + held %d = %d, want received %d + duplicates %d = %d",
			st.Forwarded, st.LimitDrops, st.Packets, got, st.Received, st.Duplicates, want)
	}
}
