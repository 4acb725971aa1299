package calibrate

import (
	"context"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
)

// profileRun is one profile's calibration on a fresh link: the bare pair's
// and the link's idle round trip, then (for a link that stays put) the
// bulk flows, the loss run and the jitter fit.
func profileRun(ctx context.Context, c Config, p shapedlink.Profile, opts shapedlink.Options) Result {
	res := profileOnce(ctx, c, p, opts)
	if c.Noise == NoiseBoth && ctx.Err() == nil {
		res.Noisy = noisyIdle(ctx, c, p, opts)
	}
	return res
}

// noisyIdle is p's idle round trip with the background load running:
// the bare pair's, then a fresh link's and its shaper's figures.
func noisyIdle(ctx context.Context, c Config, p shapedlink.Profile, opts shapedlink.Options) *Idle {
	nz, err := startNoise()
	if err != nil {
		return &Idle{Error: err.Error()}
	}
	defer nz.stop()
	var r Result
	if c.Bare {
		r.Bare = probeLink(ctx, c, p, bareOptions(opts, opts.Offload), 0)
	}
	l, err := shapedlink.New(ctx, p, opts)
	if err != nil {
		return &Idle{Bare: r.Bare, Error: err.Error()}
	}
	defer l.Close()
	pingRoundTrip(ctx, c, l, &r, pingExpected(p), p.RoundTrip())
	return &Idle{Bare: r.Bare, Ping: r.Ping, LateTrace: r.LateTrace, ShaperLateP50Ms: r.ShaperLateP50Ms, ShaperLateP99Ms: r.ShaperLateP99Ms,
		ShaperLateMaxMs: r.ShaperLateMaxMs, ShaperGCCycles: r.ShaperGCCycles, ShaperGCPauseMaxMs: r.ShaperGCPauseMaxMs}
}

// bareOptions are opts for an unshaped veth pair in offload mode m: no
// emulator, so no CPUs kept awake for one.
func bareOptions(opts shapedlink.Options, m shapedlink.OffloadMode) shapedlink.Options {
	opts.Backend, opts.Offload, opts.EmulatorKeepAwake, opts.EmulatorKeepAwakeAuto, opts.EmulatorDepartureWindow = shapedlink.BackendNone, m, false, false, 0
	return opts
}

// keptAwake describes the CPUs kept awake, e.g. "CPUs 0,1 kept awake".
func keptAwake(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return "CPUs " + strings.Join(s, ",") + " kept awake"
}

// pingExpected is the ICMP probe's expected round trip over p: the RTT
// and the probe frame's serialisation each way.
func pingExpected(p shapedlink.Profile) time.Duration {
	down, up := p.Direction(shapedlink.Down), p.Direction(shapedlink.Up)
	return p.RoundTrip() + frameTime(pingFrame, down.RateMbit*1e6) + frameTime(pingFrame, up.RateMbit*1e6)
}

// profileOnce is profileRun without the NoiseBoth repeat; with NoiseOn
// the load runs from the bare pair's probe to the end of the link's.
func profileOnce(ctx context.Context, c Config, p shapedlink.Profile, opts shapedlink.Options) Result {
	res := Result{Profile: p.String()}
	var nz *noise
	if c.Noise == NoiseOn {
		var err error
		if nz, err = startNoise(); err != nil {
			res.Error = err.Error()
			return res
		}
		res.Noise = string(NoiseOn)
		defer nz.stop()
	}
	// The bulk flows and the loss run go server to client (down); a round
	// trip crosses both directions, each at its own rate.
	down, up := p.Direction(shapedlink.Down), p.Direction(shapedlink.Up)
	rate := down.RateMbit * 1e6
	rtt := p.RoundTrip()
	crossing := func(frame int) time.Duration {
		return rtt + frameTime(frame, rate) + frameTime(frame, up.RateMbit*1e6)
	}
	if c.Bare {
		// The machine's own round trip, the same probe, just before.
		res.Bare = probeLink(ctx, c, p, bareOptions(opts, opts.Offload), 0)
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
	if sh, ok := l.Instruments().ShaperStats(); ok {
		// The emulator's own account adds whether its memory is locked,
		// and which CPUs were kept awake.
		for _, part := range strings.Split(sh.Priority, ", ") {
			if strings.HasPrefix(part, "memory") {
				res.Priority += ", " + part
			}
		}
		if len(sh.KeepAwakeCPUs) > 0 {
			res.Priority += ", " + keptAwake(sh.KeepAwakeCPUs)
		}
	}

	pingRoundTrip(ctx, c, l, &res, crossing(pingFrame), rtt)
	nz.stop()
	echoRoundTrip(ctx, c, l, &res, crossing(echoFrame), rtt)
	if down.Schedule != "" || down.Trace != "" {
		// The bulk flows and the loss run assume a link that stays put.
		res.TimeVarying = timeVarying(ctx, l, down, c.TimeVarying)
		return res
	}
	bulkFlows(ctx, c, l, &res, rate)
	lossFigures(ctx, c, l, &res, down, rate, rtt)
	if cdf := down.JitterCDF(); cdf != nil && c.JitterProbes > 0 {
		jitterFigures(ctx, c, l, &res, down, cdf, rate, rtt)
	}
	return res
}

// pingRoundTrip is the link's own idle round trip (the ICMP probe,
// against expected) and the emulator's record of how late it wrote the
// probe's frames, the worse direction's.
func pingRoundTrip(ctx context.Context, c Config, l *shapedlink.Link, res *Result, expected, rtt time.Duration) {
	if t := c.tracer; t != nil && l.Backend() == shapedlink.BackendEmulator {
		cond := "quiet"
		if res.Noise == string(NoiseOn) || res.Profile == "" {
			cond = "noisy"
		}
		lt := &LateTrace{}
		res.LateTrace = lt
		if err := t.arm(); err != nil {
			lt.Error = err.Error()
		}
		defer func() {
			caught, err := t.disarm()
			if err != nil && lt.Error == "" {
				lt.Error = err.Error()
			}
			lt.Caught = caught
			if !caught {
				return
			}
			lt.File = traceName(c.TraceDir, l.Profile().String(), cond)
			if err := t.save(lt.File); err != nil {
				lt.Error = err.Error()
				return
			}
			if b, err := os.ReadFile(lt.File); err == nil {
				lt.Reading = readTrace(string(b))
			}
		}()
	}
	res.Ping = probe(ctx, c, l, expected, rtt)
	if sh, ok := l.Instruments().ShaperStats(); ok {
		for _, d := range sh.Directions {
			res.ShaperLateP50Ms = max(res.ShaperLateP50Ms, d.LateP50Ms)
			res.ShaperLateP99Ms = max(res.ShaperLateP99Ms, d.LateP99Ms)
			res.ShaperLateMaxMs = max(res.ShaperLateMaxMs, d.LateMaxMs)
		}
		if g := sh.GC; g != nil {
			cycles := g.Cycles
			res.ShaperGCCycles, res.ShaperGCPauseMaxMs = &cycles, g.PauseMaxMs
		}
	}
}

// echoRoundTrip is an application's idle round trip: the UDP echo over
// loopback in the server's namespace (what the measuring processes add),
// then across the link, against expected.
func echoRoundTrip(ctx context.Context, c Config, l *shapedlink.Link, res *Result, expected, rtt time.Duration) {
	res.ExpectedRTTms = float64(expected) / 1e6
	if base, _, err := echoes(ctx, l.Server(), l.Server(), net.IPv4(127, 0, 0, 1), net.IPv4(127, 0, 0, 1), c.Echoes, 0); err == nil && len(base) > 0 {
		res.BaselineP50Ms = float64(quantile(base, 0.5)) / 1e6
		res.BaselineP99Ms = float64(quantile(base, 0.99)) / 1e6
	}
	rtts, sent, err := echoes(ctx, l.Client(), l.Server(), ipOf(l.ClientAddr()), ipOf(l.ServerAddr()), c.Echoes, rtt)
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
}

// bulkFlows runs the two bulk flows down the link, BBR with large buffers
// then Cubic with the kernel's, and the emulator's CPU time per frame
// across both.
func bulkFlows(ctx context.Context, c Config, l *shapedlink.Link, res *Result, rate float64) {
	cpu0, pk0 := shaperCPU(l.Instruments().EmulatorPID()), framesIn(l)
	for _, f := range []struct{ cc, buf string }{{"bbr", "32MiB"}, {"cubic", "default"}} {
		res.Bulk = append(res.Bulk, bulk(ctx, l, f.cc, f.buf == "32MiB", c.Bulk, rate))
	}
	cpu1, pk1 := shaperCPU(l.Instruments().EmulatorPID()), framesIn(l)
	if cpu0 >= 0 && cpu1 > cpu0 && pk1 > pk0 {
		res.CPUPerPacketNs = float64(cpu1-cpu0) / float64(pk1-pk0)
	}
}

// lossFigures runs the loss run down the drained link and sets the loss,
// its bursts, its interval against the configured model, what the shaper
// itself dropped, and the duplication and reordering it saw.
func lossFigures(ctx context.Context, c Config, l *shapedlink.Link, res *Result, down shapedlink.Direction, rate float64, rtt time.Duration) {
	res.LossSent = c.LossPackets
	drain(l, 5*time.Second)
	d0 := shaperDrops(l)
	e0, _ := rxErrors(l.Client())
	rec, err := lossRun(ctx, l, c.LossPackets, rate, rtt, down.Limit)
	if e1, eerr := rxErrors(l.Client()); eerr == nil {
		rec.caught = e1 - min(e0, e1)
	}
	seen := rec.seen
	res.LossShaperDrops = shaperDrops(l) - d0
	if err != nil && res.Error == "" {
		res.Error = "loss: " + err.Error()
	}
	dupAndReorder(res, rec, down)
	corruptFigures(res, rec, down, c.LossPackets)
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
	// Corruption loses what the receiver's checks drop, and a frame whose
	// destination address or type was hit (see corruptLoss).
	want = 100 - (100-want)*(1-corruptLoss(down))
	res.LossBurstWant = wantBurst
	lo, hi := Wilson(lost, c.LossPackets)
	if inflation > 1 {
		lo, hi = wilsonEffective(lost, c.LossPackets, inflation)
	}
	res.LossPct = 100 * float64(lost) / float64(c.LossPackets)
	res.LossLoPct, res.LossHiPct = 100*lo, 100*hi
	res.LossInside = want/100 >= lo && want/100 <= hi
}

// jitterFigures sends sparse one-way probes down the drained link and
// fits their delays beyond the fixed ones against cdf, the configured
// jitter's distribution.
func jitterFigures(ctx context.Context, c Config, l *shapedlink.Link, res *Result, down shapedlink.Direction, cdf func(time.Duration) float64, rate float64, rtt time.Duration) {
	// Sparse probes, so that a frame rarely has to wait for the one
	// before it (with a rate, netem never lets one overtake).
	gap := max(4*down.Jitter, lossGap(rate, rtt, down.Limit))
	drain(l, 2*time.Second)
	rec, err := oneWay(ctx, l, c.JitterProbes, gap, rtt)
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
