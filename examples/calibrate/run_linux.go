package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/shakenfist/quicbench/internal/buildinfo"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
	"golang.org/x/sys/unix"
)

const (
	echoPayload = 64
	echoFrame   = echoPayload + 8 + 20 + 14 // UDP, IPv4, Ethernet
	bigBuffers  = 32 << 20
)

// prepare gets the privilege to build links: see shapedlink.Reexec.
func prepare() error { return shapedlink.Reexec() }

func run(ctx context.Context, c config, log *slog.Logger) (Report, error) {
	var profiles []shapedlink.Profile
	if strings.TrimSpace(c.profiles) != "" {
		var err error
		if profiles, err = shapedlink.ParseProfiles(c.profiles); err != nil {
			return Report{}, err
		}
	}
	rates, err := parseRates("-sweep", c.sweep)
	if err != nil {
		return Report{}, err
	}
	iperfRates, err := parseRates("-iperf3", c.iperf)
	if err != nil {
		return Report{}, err
	}
	discs := strings.Fields(c.qdisc)
	for _, d := range discs {
		if d != "fifo" && d != "codel" && d != "fq_codel" {
			return Report{}, fmt.Errorf("-qdisc names %q; the disciplines are fifo, codel and fq_codel", d)
		}
	}
	var qdiscAt shapedlink.Profile
	if len(discs) > 0 {
		if qdiscAt, err = shapedlink.ParseProfile(c.qdiscAt); err != nil {
			return Report{}, fmt.Errorf("-qdisc-profile: %w", err)
		}
	}
	if len(profiles) == 0 && len(rates) == 0 && len(iperfRates) == 0 && len(discs) == 0 {
		return Report{}, errors.New("nothing to measure: -profiles, -sweep, -iperf3 and -qdisc are all empty")
	}
	if _, err := exec.LookPath("iperf3"); len(iperfRates) > 0 && err != nil {
		return Report{}, errors.New("-iperf3 needs iperf3 on PATH (Debian: apt-get install iperf3)")
	}
	host, _ := os.Hostname()
	load, _ := os.ReadFile("/proc/loadavg")
	rep := Report{Started: time.Now().UTC(), Host: host, Load: strings.TrimSpace(string(load)), Build: buildinfo.Read()}
	opts := shapedlink.Options{Backend: shapedlink.Backend(c.backend), Seed: c.seed, Logger: log}
	for _, p := range profiles {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		log.Info("calibrate: profile", "profile", p.String())
		rep.Results = append(rep.Results, calibrate(ctx, c, p, opts))
	}
	for _, r := range rates {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		log.Info("calibrate: sweep", "rate_mbit", r)
		s := sweep(ctx, c, r, opts)
		rep.Sweep = append(rep.Sweep, s)
		ok := s.Bulk.Error == "" && s.Bulk.WirePct >= 95 || s.Cubic.Error == "" && s.Cubic.WirePct >= 95
		if s.Error == "" && ok && r > rep.HighestOKMbit {
			rep.HighestOKMbit = r
		}
	}
	if len(discs) > 0 {
		log.Info("calibrate: queue disciplines", "disciplines", c.qdisc, "profile", qdiscAt.String())
		rep.Qdisc = qdiscSeries(ctx, c, qdiscAt, discs, opts)
	}
	if len(iperfRates) > 0 {
		log.Info("calibrate: iperf3", "rates_mbit", c.iperf)
		fs, err := iperfSeries(ctx, c, iperfRates, opts)
		rep.Iperf = fs
		if err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// parseRates reads a space-separated list of positive rates in Mbit/s.
func parseRates(flagName, s string) ([]float64, error) {
	var rates []float64
	for _, f := range strings.Fields(s) {
		r, err := strconv.ParseFloat(f, 64)
		if err != nil || !(r > 0) || r > 100000 {
			return nil, fmt.Errorf("%s: %q is not a rate in Mbit/s between 0 and 100000", flagName, f)
		}
		rates = append(rates, r)
	}
	return rates, nil
}

func calibrate(ctx context.Context, c config, p shapedlink.Profile, opts shapedlink.Options) Result {
	res := Result{Profile: p.String()}
	// The bulk flows and the loss run go server to client (down); a round
	// trip crosses both directions, each at its own rate.
	down, up := p.Direction(shapedlink.Down), p.Direction(shapedlink.Up)
	rate := down.RateMbit * 1e6
	rtt := p.RoundTrip()
	crossing := func(frame int) time.Duration {
		return rtt + frameTime(frame, rate) + frameTime(frame, up.RateMbit*1e6)
	}
	if c.bare {
		// The machine's own round trip, the same probe, just before.
		bopts := opts
		bopts.Backend = shapedlink.BackendNone
		res.Bare = probeLink(ctx, c, p, bopts, 0)
	}
	l, err := shapedlink.New(ctx, p, opts)
	if err != nil {
		res.Error = err.Error()
		return res
	}
	defer l.Close()
	res.Backend = string(l.Backend())
	res.Applied = l.Applied()
	res.Priority = priority(l.Instruments().EmulatorPID())

	res.Ping = probe(ctx, c, l, crossing(pingFrame), rtt)
	if sh, ok := l.Instruments().ShaperStats(); ok {
		for _, d := range sh.Directions {
			res.ShaperLateP50Ms = max(res.ShaperLateP50Ms, d.LateP50Ms)
			res.ShaperLateP99Ms = max(res.ShaperLateP99Ms, d.LateP99Ms)
			res.ShaperLateMaxMs = max(res.ShaperLateMaxMs, d.LateMaxMs)
		}
	}

	expected := crossing(echoFrame)
	res.ExpectedRTTms = float64(expected) / 1e6
	if base, _, err := echoes(ctx, l.Server(), l.Server(), net.IPv4(127, 0, 0, 1), net.IPv4(127, 0, 0, 1), c.echoes, 0); err == nil && len(base) > 0 {
		res.BaselineP50Ms = float64(quantile(base, 0.5)) / 1e6
		res.BaselineP99Ms = float64(quantile(base, 0.99)) / 1e6
	}
	rtts, sent, err := echoes(ctx, l.Client(), l.Server(), ipOf(l.ClientAddr()), ipOf(l.ServerAddr()), c.echoes, rtt)
	res.Echoes, res.Answered = sent, len(rtts)
	if err != nil {
		res.Error = "echo: " + err.Error()
	}
	if len(rtts) > 0 {
		p50, p99 := quantile(rtts, 0.5), quantile(rtts, 0.99)
		res.RTTMinMs = float64(rtts[0]) / 1e6
		res.RTTP50Ms, res.RTTP99Ms = float64(p50)/1e6, float64(p99)/1e6
		res.RTTP50ErrMs = float64(p50-expected) / 1e6
		res.RTTP99ErrMs = float64(p99-expected) / 1e6
	}

	if down.Schedule != "" || down.Trace != "" {
		// The bulk flows and the loss run assume a link that stays put.
		res.TimeVarying = timeVarying(ctx, l, down, c.timeVarying)
		return res
	}

	cpu0, pk0 := shaperCPU(l.Instruments().EmulatorPID()), framesIn(l)
	for _, f := range []struct{ cc, buf string }{{"bbr", "32MiB"}, {"cubic", "default"}} {
		res.Bulk = append(res.Bulk, bulk(ctx, l, f.cc, f.buf == "32MiB", c.bulk, rate))
	}
	cpu1, pk1 := shaperCPU(l.Instruments().EmulatorPID()), framesIn(l)
	if cpu0 >= 0 && cpu1 > cpu0 && pk1 > pk0 {
		res.CPUPerPacketNs = float64(cpu1-cpu0) / float64(pk1-pk0)
	}

	res.LossSent = c.lossPkts
	drain(l, 5*time.Second)
	d0 := shaperDrops(l)
	rec, err := lossRun(ctx, l, c.lossPkts, rate, rtt, down.Limit)
	seen := rec.seen
	res.LossShaperDrops = shaperDrops(l) - d0
	if err != nil && res.Error == "" {
		res.Error = "loss: " + err.Error()
	}
	dupAndReorder(&res, rec, down)
	lost, bursts := lossRuns(seen)
	res.LossDelivered = len(seen) - lost
	if bursts > 0 {
		res.LossMeanBurst = float64(lost) / float64(bursts)
	}
	// Configured: the mean loss, the mean burst length, and how much the
	// bursts widen the interval (see lossModel).
	want, wantBurst, inflation := lossModel(down)
	// A duplicated datagram that is lost still goes through once (netem
	// counts copies), so duplication hides that share of the loss.
	want *= 1 - down.DupPct/100
	res.LossBurstWant = wantBurst
	lo, hi := wilson(lost, c.lossPkts)
	if inflation > 1 {
		lo, hi = wilsonEffective(lost, c.lossPkts, inflation)
	}
	res.LossPct = 100 * float64(lost) / float64(c.lossPkts)
	res.LossLoPct, res.LossHiPct = 100*lo, 100*hi
	res.LossInside = want/100 >= lo && want/100 <= hi

	if cdf := down.JitterCDF(); cdf != nil && c.jitterProbes > 0 {
		// Sparse probes, so that a frame rarely has to wait for the one
		// before it (with a rate, netem never lets one overtake).
		gap := max(4*down.Jitter, lossGap(rate, rtt, down.Limit))
		drain(l, 2*time.Second)
		rec, err := oneWay(ctx, l, c.jitterProbes, gap, rtt)
		if err != nil && res.Error == "" {
			res.Error = "jitter: " + err.Error()
		}
		// The machine's own one-way share: half the bare round trip.
		var machine time.Duration
		if res.Bare != nil && res.Bare.Answered > 0 {
			machine = time.Duration(res.Bare.P50ErrMs / 2 * 1e6)
		}
		var offsets []time.Duration
		for i, ok := range rec.seen {
			if ok {
				offsets = append(offsets, rec.oneWay[i]-down.Delay-frameTime(echoFrame, rate)-machine)
			}
		}
		res.Jitter = fitJitter(offsets, cdf, down.Jitter, gap)
	}
	return res
}

// probeLink builds a link of p with opts, probes its idle round trip and
// takes it down; expected is the round trip the probe should see.
func probeLink(ctx context.Context, c config, p shapedlink.Profile, opts shapedlink.Options, expected time.Duration) *Probe {
	l, err := shapedlink.New(ctx, p, opts)
	if err != nil {
		return &Probe{Error: err.Error()}
	}
	defer l.Close()
	return probe(ctx, c, l, expected, 0)
}

// probe sends c.echoes ICMP echoes across l, one every c.interval, and
// summarises their round trips against expected.
func probe(ctx context.Context, c config, l *shapedlink.Link, expected, rtt time.Duration) *Probe {
	pr := &Probe{IntervalMs: float64(c.interval) / 1e6, ExpectedMs: float64(expected) / 1e6}
	rtts, sent, err := pings(ctx, l.Client(), l.ServerAddr(), c.echoes, c.interval, rtt)
	pr.Sent, pr.Answered = sent, len(rtts)
	if err != nil {
		pr.Error = err.Error()
	} else if len(rtts) == 0 {
		pr.Error = "no echo request was answered"
	}
	if len(rtts) > 0 {
		e := func(q float64) float64 { return float64(quantile(rtts, q)-expected) / 1e6 }
		pr.MinErrMs, pr.P50ErrMs, pr.P90ErrMs, pr.P99ErrMs, pr.MaxErrMs = e(0), e(0.5), e(0.9), e(0.99), e(1)
	}
	return pr
}

func sweep(ctx context.Context, c config, rateMbit float64, opts shapedlink.Options) Sweep {
	s := Sweep{RateMbit: rateMbit}
	p, err := shapedlink.NewProfile(5*time.Millisecond, rateMbit, 0)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	l, err := shapedlink.New(ctx, p, opts)
	if err != nil {
		s.Error = err.Error()
		return s
	}
	defer l.Close()
	cpu0, pk0 := shaperCPU(l.Instruments().EmulatorPID()), framesIn(l)
	s.Bulk = bulk(ctx, l, "bbr", true, c.bulk, rateMbit*1e6)
	s.Cubic = bulk(ctx, l, "cubic", true, c.bulk, rateMbit*1e6)
	cpu1, pk1 := shaperCPU(l.Instruments().EmulatorPID()), framesIn(l)
	if cpu0 >= 0 && cpu1 > cpu0 && pk1 > pk0 {
		s.CPUNs = float64(cpu1-cpu0) / float64(pk1-pk0)
	}
	return s
}

// udpIn opens a UDP socket inside ns.
func udpIn(ns *shapedlink.Namespace, ip net.IP) (*net.UDPConn, error) {
	var c *net.UDPConn
	err := ns.Do(func() (err error) {
		c, err = net.ListenUDP("udp4", &net.UDPAddr{IP: ip})
		return err
	})
	return c, err
}

func ipOf(a interface{ AsSlice() []byte }) net.IP { return net.IP(a.AsSlice()) }

// echoes sends n stamped echoes from a socket on cliIP in cliNS to an echo
// server on srvIP in srvNS, one every 10 ms, and returns the round trips
// of those answered.
func echoes(ctx context.Context, cliNS, srvNS *shapedlink.Namespace, cliIP, srvIP net.IP, n int, rtt time.Duration) ([]time.Duration, int, error) {
	srv, err := udpIn(srvNS, srvIP)
	if err != nil {
		return nil, 0, err
	}
	defer srv.Close()
	cli, err := udpIn(cliNS, cliIP)
	if err != nil {
		return nil, 0, err
	}
	defer cli.Close()
	go func() {
		buf := make([]byte, 2048)
		for {
			k, from, err := srv.ReadFromUDP(buf)
			if err != nil {
				return
			}
			_, _ = srv.WriteToUDP(buf[:k], from)
		}
	}()
	base := time.Now()
	var mu sync.Mutex
	var rtts []time.Duration
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			k, _, err := cli.ReadFromUDP(buf)
			now := time.Since(base)
			if err != nil {
				return
			}
			if k == echoPayload {
				sent := time.Duration(binary.LittleEndian.Uint64(buf))
				mu.Lock()
				rtts = append(rtts, now-sent)
				mu.Unlock()
			}
		}
	}()
	to := srv.LocalAddr().(*net.UDPAddr)
	msg := make([]byte, echoPayload)
	sent := 0
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for i := 0; i < n; i++ {
		select {
		case <-ctx.Done():
			return nil, sent, ctx.Err()
		case <-tick.C:
		}
		binary.LittleEndian.PutUint64(msg, uint64(time.Since(base)))
		if _, err := cli.WriteToUDP(msg, to); err != nil {
			return nil, sent, err
		}
		sent++
	}
	time.Sleep(rtt + 500*time.Millisecond)
	cli.Close()
	<-done
	mu.Lock()
	defer mu.Unlock()
	return rtts, sent, nil
}

// setSockopts pins the congestion control (cc, unless empty) and, when
// bufOpt is SO_RCVBUFFORCE or SO_SNDBUFFORCE, asks for a 32 MiB buffer.
// The forcing options need CAP_NET_ADMIN in the host's user namespace; in
// a user namespace of its own (unprivileged mode) the kernel refuses them,
// and the buffer is asked for with the plain option instead, which the
// host's net.core.rmem_max or wmem_max caps. capped then receives what the
// kernel granted, as getsockopt reports it.
func setSockopts(c syscall.RawConn, cc string, bufOpt int, capped *string) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		if cc != "" {
			if err := unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, cc); err != nil {
				serr = fmt.Errorf("TCP_CONGESTION %q: %w (is tcp_%s loaded?)", cc, err, cc)
				return
			}
		}
		if bufOpt == 0 {
			return
		}
		err := unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, bufOpt, bigBuffers)
		if err == nil || !errors.Is(err, unix.EPERM) {
			if err != nil {
				serr = fmt.Errorf("setting a %d MiB socket buffer: %w", bigBuffers>>20, err)
			}
			return
		}
		plain, name, limit := unix.SO_RCVBUF, "receive", "rmem_max"
		if bufOpt == unix.SO_SNDBUFFORCE {
			plain, name, limit = unix.SO_SNDBUF, "send", "wmem_max"
		}
		if err := unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, plain, bigBuffers); err != nil {
			serr = fmt.Errorf("setting a %d MiB %s buffer without privilege: %w", bigBuffers>>20, name, err)
			return
		}
		got, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, plain)
		if err != nil {
			serr = fmt.Errorf("reading the %s buffer size: %w", name, err)
			return
		}
		if capped != nil {
			*capped = fmt.Sprintf("%s %d bytes (net.core.%s)", name, got, limit)
		}
	})
	if err != nil {
		return err
	}
	return serr
}

// bulk runs one TCP flow from server to client for d and returns its
// goodput over the last two thirds.
func bulk(ctx context.Context, l *shapedlink.Link, cc string, big bool, d time.Duration, rate float64) Bulk {
	b := Bulk{CC: cc, Buffers: "default"}
	rcvOpt, sndOpt := 0, 0
	if big {
		b.Buffers = "32MiB"
		rcvOpt, sndOpt = unix.SO_RCVBUFFORCE, unix.SO_SNDBUFFORCE
	}
	fail := func(err error) Bulk { b.Error = err.Error(); return b }
	var ln net.Listener
	// Set only when the 32 MiB buffers could not be forced (see
	// setSockopts); each Control runs before its Listen or Dial returns.
	var rcvCapped, sndCapped string
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error { return setSockopts(c, "", rcvOpt, &rcvCapped) }}
	if err := l.Client().Do(func() (err error) {
		ln, err = lc.Listen(ctx, "tcp4", net.JoinHostPort(l.ClientAddr().String(), "0"))
		return err
	}); err != nil {
		return fail(err)
	}
	defer ln.Close()
	type got struct {
		bytes, wire int64 // in-order bytes received; bytes the shaper forwarded
		wireOK      bool
		dur         time.Duration
		err         error
	}
	// forwarded is what the emulator wrote towards the client so far, the
	// bytes that crossed the wire; false with netem.
	forwarded := func() (int64, bool) {
		sh, ok := l.Instruments().ShaperStats()
		if !ok || len(sh.Directions) == 0 {
			return 0, false
		}
		return int64(sh.Directions[0].ForwardedBytes), true
	}
	res := make(chan got, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			res <- got{err: err}
			return
		}
		defer c.Close()
		_ = c.(*net.TCPConn).SetLinger(0)
		// Goodput from the receiving kernel's own count of in-order bytes
		// (tcpi_bytes_received), so the application's read timing does
		// not matter.
		received := func() (int64, error) {
			rc, err := c.(*net.TCPConn).SyscallConn()
			if err != nil {
				return 0, err
			}
			var v int64
			var ierr error
			err = rc.Control(func(fd uintptr) {
				var info *unix.TCPInfo
				info, ierr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
				if ierr == nil {
					v = int64(info.Bytes_received)
				}
			})
			if err == nil {
				err = ierr
			}
			return v, err
		}
		go func() {
			buf := make([]byte, 256<<10)
			for {
				if _, err := c.Read(buf); err != nil {
					return
				}
			}
		}()
		start := time.Now()
		time.Sleep(d / 3)
		b0, err := received()
		w0, ok0 := forwarded()
		t0 := time.Now()
		time.Sleep(d - d/3)
		b1, err1 := received()
		w1, ok1 := forwarded()
		t1 := time.Now()
		if err == nil {
			err = err1
		}
		_ = start
		res <- got{bytes: b1 - b0, wire: w1 - w0, wireOK: ok0 && ok1, dur: t1.Sub(t0), err: err}
	}()
	dialer := net.Dialer{Timeout: 10 * time.Second, Control: func(_, _ string, c syscall.RawConn) error { return setSockopts(c, cc, sndOpt, &sndCapped) }}
	var conn net.Conn
	if err := l.Server().Do(func() (err error) {
		conn, err = dialer.DialContext(ctx, "tcp4", ln.Addr().String())
		return err
	}); err != nil {
		return fail(err)
	}
	defer conn.Close()
	if rcvCapped != "" || sndCapped != "" {
		var got []string
		for _, c := range []string{rcvCapped, sndCapped} {
			if c != "" {
				got = append(got, c)
			}
		}
		b.Buffers = "32MiB refused without host root; granted " + strings.Join(got, ", ")
	}
	// Abort at close: no draining a 32 MiB send buffer into the next test.
	_ = conn.(*net.TCPConn).SetLinger(0)
	go func() {
		buf := make([]byte, 64<<10)
		for {
			if _, err := conn.Write(buf); err != nil {
				return
			}
		}
	}()
	var g got
	select {
	case g = <-res:
	case <-ctx.Done():
		return fail(ctx.Err())
	}
	if g.err != nil {
		return fail(g.err)
	}
	if g.dur <= 0 {
		return fail(errors.New("no data arrived after the warm-up"))
	}
	bits := float64(g.bytes*8) / g.dur.Seconds()
	b.GoodputMbit = bits / 1e6
	b.GoodputPct = 100 * bits / rate
	if g.wireOK {
		b.WirePct, b.WireFrom = 100*float64(g.wire*8)/g.dur.Seconds()/rate, "shaper"
	} else {
		b.WirePct, b.WireFrom = b.GoodputPct*fullFrame/fullPayload, "estimate"
	}
	checkWire(&b, maxWirePct(g.dur, rate))
	return b
}

// lossRun sends n datagrams from server to client and counts those
// delivered. The pace is half the link's byte rate and half what the
// packet limit allows (the limit counts the delay line, so at 80:10 and
// limit 110 more than 2750 packets/s would be dropped by the limit even
// though their bytes fit the rate).
func lossRun(ctx context.Context, l *shapedlink.Link, n int, rate float64, rtt time.Duration, limit int) (lossRecord, error) {
	return oneWay(ctx, l, n, lossGap(rate, rtt, limit), rtt)
}

// lossGap is the loss run's spacing: see lossRun.
func lossGap(rate float64, rtt time.Duration, limit int) time.Duration {
	perPkt := frameTime(echoFrame, rate)
	return max(2*perPkt, 2*(rtt/2+perPkt)/time.Duration(limit), 20*time.Microsecond)
}

// oneWay sends n datagrams from server to client, gap apart, and records
// which arrived, how many copies, and the one-way delay of the first.
func oneWay(ctx context.Context, l *shapedlink.Link, n int, gap, rtt time.Duration) (lossRecord, error) {
	srv, err := udpIn(l.Server(), ipOf(l.ServerAddr()))
	if err != nil {
		return lossRecord{}, err
	}
	defer srv.Close()
	cli, err := udpIn(l.Client(), ipOf(l.ClientAddr()))
	if err != nil {
		return lossRecord{}, err
	}
	defer cli.Close()
	_ = cli.SetReadBuffer(8 << 20)
	base := time.Now()
	got := make(chan lossRecord, 1)
	go func() {
		r := lossRecord{seen: make([]bool, n), copies: make([]int, n), oneWay: make([]time.Duration, n)}
		buf := make([]byte, 2048)
		for {
			k, _, err := cli.ReadFromUDP(buf)
			if err != nil {
				got <- r
				return
			}
			if k >= 12 {
				if i := int(binary.BigEndian.Uint32(buf)); i < n {
					if !r.seen[i] {
						r.oneWay[i] = time.Since(base) - time.Duration(binary.BigEndian.Uint64(buf[4:]))
					}
					r.seen[i] = true
					r.copies[i]++
				}
			}
		}
	}()
	to := cli.LocalAddr().(*net.UDPAddr)
	msg := make([]byte, echoPayload)
	start := time.Now()
	for i := 0; i < n; i++ {
		if ctx.Err() != nil {
			return lossRecord{}, ctx.Err()
		}
		if wait := time.Until(start.Add(time.Duration(i) * gap)); wait > 0 {
			time.Sleep(wait)
		}
		binary.BigEndian.PutUint32(msg, uint32(i))
		binary.BigEndian.PutUint64(msg[4:], uint64(time.Since(base)))
		if _, err := srv.WriteToUDP(msg, to); err != nil {
			return lossRecord{}, err
		}
	}
	time.Sleep(rtt + 500*time.Millisecond)
	cli.Close()
	return <-got, nil
}

// shaperCPU is the emulator process's CPU time in ns, summed over its
// threads, or -1 when there is none.
func shaperCPU(pid int) int64 {
	if pid == 0 {
		return -1
	}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	var sum int64
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			v, _ := strconv.ParseInt(f[0], 10, 64)
			sum += v
		}
	}
	if len(tasks) == 0 {
		return -1
	}
	return sum
}

// drain waits until nothing is queued in either direction.
func drain(l *shapedlink.Link, d time.Duration) {
	end := time.Now().Add(d)
	for _, e := range []shapedlink.End{shapedlink.ServerEnd, shapedlink.ClientEnd} {
		s, err := l.Instruments().Sampler(e)
		if err != nil {
			continue
		}
		for time.Now().Before(end) {
			if q, err := s.Poll(); err != nil || q.Packets == 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		s.Close()
	}
}

// shaperDrops is the server-to-client direction's drops so far.
func shaperDrops(l *shapedlink.Link) uint64 {
	s, err := l.Instruments().Sampler(shapedlink.ServerEnd)
	if err != nil {
		return 0
	}
	defer s.Close()
	q, err := s.Poll()
	if err != nil {
		return 0
	}
	return q.Drops
}

// framesIn is every frame that entered the link, both directions.
func framesIn(l *shapedlink.Link) uint64 {
	var n uint64
	for _, e := range []shapedlink.End{shapedlink.ServerEnd, shapedlink.ClientEnd} {
		if c, err := l.Instruments().EgressCounters(e); err == nil {
			n += c.All.Packets
		}
	}
	return n
}

// priority describes the emulator's scheduling from /proc (policy and nice
// of its threads), or "" without an emulator.
func priority(pid int) string {
	if pid == 0 {
		return ""
	}
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	seen := map[string]int{}
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		// Fields after the command: state is f[0]; nice is stat field 19
		// (f[16]) and policy field 41 (f[38]).
		if len(f) < 39 {
			continue
		}
		pol := map[string]string{"0": "SCHED_OTHER", "1": "SCHED_FIFO", "2": "SCHED_RR", "3": "SCHED_BATCH", "5": "SCHED_IDLE"}[f[38]]
		seen[pol+" nice "+f[16]]++
	}
	var parts []string
	for k, v := range seen {
		parts = append(parts, fmt.Sprintf("%d threads %s", v, k))
	}
	return strings.Join(parts, ", ")
}
