package reporttest

import (
	"fmt"
	"time"

	"github.com/shakenfist/quicbench/gsocheck"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
)

// goldenN is the number of post-warm-up samples per synthetic session in
// Golden: few, to keep the committed fixture small.
const goldenN = 20

// spec is one arm of one Golden cell: each repeat's p95 (ms), the shared
// p50 and p99, the median throughput and the connect time.
type spec struct {
	arm             string
	p50, p99        float64
	p95             []float64
	mbit, connectMs float64
}

// golden accumulates Golden's runs, each started a minute after the last.
type golden struct {
	start time.Time
	runs  []results.Run
}

// run builds repeat rep (1-based) of an arm as a measured single-session
// run on the emulator backend, with a clean shaper report.
func (g *golden) run(c results.Cell, s spec, rep int) results.Run {
	started := g.start.Add(time.Duration(len(g.runs)) * time.Minute)
	r := results.Run{
		Schema:         results.SchemaVersion,
		Cell:           c,
		Arm:            s.arm,
		Repeat:         rep,
		Started:        started,
		Finished:       started.Add(45 * time.Second),
		Duration:       45 * time.Second,
		Warmup:         Warmup,
		Samples:        Repeat(s.p50, s.p95[rep-1], s.p99, goldenN),
		ThroughputMbit: s.mbit * (1 + 0.01*float64(rep-2)),
		ConnectTime:    dur(s.connectMs + 0.3*float64(rep)),
		Link: results.Link{
			Backend: "emulator",
			Applied: []string{
				fmt.Sprintf("server->client delay %gms rate %gmbit loss %g%% limit 110", c.RTTms/2, c.RateMbit, c.LossPct),
				fmt.Sprintf("client->server delay %gms rate %gmbit loss %g%% limit 110", c.RTTms/2, c.RateMbit, c.LossPct),
			},
			Limit: 110,
			Seed:  7,
		},
		Host: host,
	}
	r.BulkBytes = int64(r.ThroughputMbit * 1e6 / 8 * 40)
	r.BulkBytesTotal = int64(r.ThroughputMbit * 1e6 / 8 * 45)
	if s.arm == "tcp" {
		r.CongestionControl = []string{c.CC, c.CC}
	} else {
		r.CongestionControl = []string{"newreno"}
		r.QUICGSO = []bool{false}
		r.GSOQueue = queueOff(rep)
	}
	return r
}

func (g *golden) add(r results.Run) { g.runs = append(g.runs, r) }

// arms adds every repeat of each spec, passing each run through edit (if
// not nil) first.
func (g *golden) arms(c results.Cell, edit func(*results.Run), specs ...spec) {
	for _, s := range specs {
		for rep := 1; rep <= len(s.p95); rep++ {
			r := g.run(c, s, rep)
			if edit != nil {
				edit(&r)
			}
			g.add(r)
		}
	}
}

func queueOff(rep int) *gsocheck.Result {
	return &gsocheck.Result{
		Verdict: gsocheck.Off, Reason: "no sample exceeded 1442 bytes per slot", Expected: 1442,
		Used: 40 + rep, Total: 60, PooledMean: 1402.5 + float64(rep), Median: 1420, Max: 1442,
	}
}

func shaper(priority string, socketDrops uint64) *shapedlink.ShaperReport {
	return &shapedlink.ShaperReport{
		Priority: priority,
		Directions: []shapedlink.ShaperStats{
			{Direction: "server->client", ShaperCounters: shapedlink.ShaperCounters{Received: 9000, Forwarded: 8990, LimitDrops: 10, SocketDrops: socketDrops}, LateP50Ms: 0.032, LateP99Ms: 0.256, LateMaxMs: 0.6},
			{Direction: "client->server", ShaperCounters: shapedlink.ShaperCounters{Received: 3000, Forwarded: 3000}, LateP50Ms: 0.016, LateP99Ms: 0.128, LateMaxMs: 0.3},
		},
	}
}

func usage(userMs, sysMs float64, rssKiB int64) *results.Usage {
	return &results.Usage{User: dur(userMs), System: dur(sysMs), MaxRSSKiB: rssKiB}
}

// Golden returns a small matrix, three repeats per arm and few samples per
// run, that reaches every section of the summary: headline reno cells on
// two profiles and three loss levels with the arms tcp, quic,
// quic-per-channel and quic-priority; a cubic sensitivity cell; a cell of
// two sessions sharing the link; a cell with the display capped at half the
// link rate; CPU figures; GSO evidence from the queue and from the
// counters, with verdicts off, on and inconclusive and runs with none; and
// everything that warns: timeouts (in a headline repeat and in a session),
// a failed repeat, a repeat with no sample after the warm-up, an arm with
// no measured repeat, a cell without tcp and one with only tcp, a socket
// reporting the wrong congestion control, quic-go reporting GSO, shaper
// counters that flag distortion, a shaper without real-time priority and
// a second link backend.
func Golden() []results.Run {
	g := &golden{start: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)}
	g.headlineClean()
	g.headlineLossy()
	g.secondProfile()
	g.twoSessions()
	g.cappedDisplay()
	g.cubicSensitivity()
	return g.runs
}

// goldenCell is a Golden cell: a headline cell when cc is reno, a
// sensitivity cell otherwise.
func goldenCell(rtt, rate, loss float64, cc string) results.Cell {
	return results.Cell{Profile: fmt.Sprintf("%g:%g", rtt, rate), RTTms: rtt, RateMbit: rate, LossPct: loss, CC: cc, Sensitivity: cc != "reno"}
}

// headlineClean adds 80 ms / 10 Mbit at 0% loss: all four arms, CPU and
// shaper reports on every run, counters beside the queue on quic-priority.
func (g *golden) headlineClean() {
	a := goldenCell(80, 10, 0, "reno")
	g.arms(a, func(r *results.Run) {
		r.ServerUsage = usage(310+10*float64(r.Repeat), 120, 18432+int64(r.Repeat)*64)
		r.ClientUsage = usage(280+5*float64(r.Repeat), 110, 16384)
		if r.Arm != "tcp" {
			r.ServerUsage.User += 150 * time.Millisecond
			r.ClientUsage.User += 120 * time.Millisecond
		}
		r.Link.Shaper = shaper("SCHED_FIFO 10", 0)
		switch {
		case r.Arm == "tcp" && r.Repeat == 2:
			r.Link.Shaper = shaper("SCHED_FIFO 10", 3)
		case r.Arm == "quic" && r.Repeat == 2:
			r.QUICGSO = []bool{false, true}
		case r.Arm == "quic-per-channel" && r.Repeat == 1:
			r.Link.Shaper = shaper("SCHED_OTHER (no CAP_SYS_NICE)", 0)
		case r.Arm == "quic-per-channel" && r.Repeat == 3:
			r.GSOQueue = nil
		case r.Arm == "quic-priority":
			r.GSOCounters = &gsocheck.Result{
				Verdict: gsocheck.Off, Reason: "no packet longer than 1442 bytes", Expected: 1442,
				Used: 5000 + r.Repeat, Total: 5000 + r.Repeat, PooledMean: 1250.5 + float64(r.Repeat),
			}
		}
	},
		spec{arm: "tcp", p50: 82, p99: 120, p95: []float64{90, 91, 92}, mbit: 9.5, connectMs: 160.5},
		spec{arm: "quic", p50: 81, p99: 100, p95: []float64{86, 86.5, 87}, mbit: 9.4, connectMs: 80.4},
		spec{arm: "quic-per-channel", p50: 84, p99: 130, p95: []float64{95, 96, 99}, mbit: 9.3, connectMs: 80.9},
		spec{arm: "quic-priority", p50: 81, p99: 98, p95: []float64{84.5, 86, 86.4}, mbit: 9.4, connectMs: 80.4},
	)
}

// headlineLossy adds 80 ms / 10 Mbit at 1% loss: timeouts in tcp r3; quic
// has one measured repeat, one failed and one with nothing after the
// warm-up, and its offload evidence says on and inconclusive.
func (g *golden) headlineLossy() {
	b := goldenCell(80, 10, 1, "reno")
	g.arms(b, func(r *results.Run) {
		switch {
		case r.Arm == "tcp" && r.Repeat == 3:
			r.Timeouts = 2
		case r.Arm == "quic" && r.Repeat == 1:
			r.GSOQueue = &gsocheck.Result{
				Verdict: gsocheck.On, Reason: "3 samples held more than (packets + 1) x 1442 bytes", Expected: 1442,
				Used: 41, Total: 60, PooledMean: 2210.4, Median: 1442, Max: 5768, AboveOne: 12, BeyondTear: 3,
			}
		case r.Arm == "quic" && r.Repeat == 2:
			r.Failed = "server: exited early: signal: killed"
			r.Samples, r.ThroughputMbit, r.BulkBytes, r.BulkBytesTotal, r.ConnectTime = nil, 0, 0, 0, 0
			r.GSOQueue, r.QUICGSO, r.CongestionControl = nil, nil, nil
		case r.Arm == "quic" && r.Repeat == 3:
			r.Samples = r.Samples[:10] // the warm-up only
			r.GSOQueue = &gsocheck.Result{
				Verdict: gsocheck.Inconclusive, Reason: "only 2 samples had two packets queued, want 20", Expected: 1442,
				Used: 2, Total: 60, PooledMean: 1440, Median: 1440, Max: 1442,
			}
		}
	},
		spec{arm: "tcp", p50: 84, p99: 400, p95: []float64{120, 125, 140}, mbit: 1.6, connectMs: 161.2},
		spec{arm: "quic", p50: 95, p99: 230, p95: []float64{150, 151, 152}, mbit: 1.5, connectMs: 81.1},
	)
}

// secondProfile adds 20 ms / 50 Mbit at 0%, 1% and 2% loss.
func (g *golden) secondProfile() {
	// 0% loss: a tcp socket reports cubic, and quic-priority has no
	// measured repeat.
	c := goldenCell(20, 50, 0, "reno")
	g.arms(c, func(r *results.Run) {
		switch {
		case r.Arm == "tcp" && r.Repeat == 2:
			r.CongestionControl = []string{"reno", "cubic"}
		case r.Arm == "quic-priority" && r.Repeat == 1:
			r.Failed = "client: dial: timeout: no recent network activity"
			r.Samples, r.ThroughputMbit, r.BulkBytes, r.BulkBytesTotal, r.ConnectTime = nil, 0, 0, 0, 0
			r.GSOQueue = nil
		case r.Arm == "quic-priority" && r.Repeat == 2:
			r.Samples = r.Samples[:10]
		}
	},
		spec{arm: "tcp", p50: 22, p99: 40, p95: []float64{30, 31, 31.5}, mbit: 47.5, connectMs: 40.2},
		spec{arm: "quic", p50: 21.5, p99: 36, p95: []float64{29, 31, 33}, mbit: 46.8, connectMs: 20.3},
		spec{arm: "quic-priority", p50: 21, p99: 35, p95: []float64{28, 29}, mbit: 46.9, connectMs: 20.3},
	)

	// 20 ms / 50 Mbit, 1% loss: quic alone, on netem, with no offload
	// evidence.
	g.arms(goldenCell(20, 50, 1, "reno"), func(r *results.Run) {
		r.Link.Backend = "netem"
		r.Link.Seed = 0
		r.GSOQueue = nil
	},
		spec{arm: "quic", p50: 24, p99: 60, p95: []float64{40, 42}, mbit: 30.2, connectMs: 20.5},
	)

	// 20 ms / 50 Mbit, 2% loss: tcp alone.
	g.arms(goldenCell(20, 50, 2, "reno"), nil,
		spec{arm: "tcp", p50: 23, p99: 220, p95: []float64{60, 64}, mbit: 18.4, connectMs: 40.6},
	)
}

// twoSessions adds 80 ms / 10 Mbit at 0% loss with two sessions:
// per-session figures, a timeout in session 1 only, and a run that
// recorded one session.
func (g *golden) twoSessions() {
	s := goldenCell(80, 10, 0, "reno")
	s.Sessions = 2
	g.arms(s, func(r *results.Run) {
		sess := make([]results.SessionResult, 2)
		for k := range sess {
			mbit := r.ThroughputMbit / 2 * (1 + 0.2*float64(k))
			p95 := 120 + 10*float64(k) + 4*float64(r.Repeat)
			if r.Arm == "tcp" {
				p95 += 40
			}
			sess[k] = results.SessionResult{
				Index:          k,
				Samples:        Repeat(90+float64(k), p95, 300, goldenN),
				ThroughputMbit: mbit,
				BulkBytes:      int64(mbit * 1e6 / 8 * 40),
				BulkBytesTotal: int64(mbit * 1e6 / 8 * 45),
				ConnectTime:    r.ConnectTime + time.Duration(k)*time.Millisecond,
			}
		}
		if r.Arm == "quic" && r.Repeat == 2 {
			sess[1].Timeouts = 1
		}
		if r.Arm == "quic-per-channel" && r.Repeat == 3 {
			sess = sess[:1]
		}
		r.Sessions = sess
		s0 := sess[0]
		r.Samples, r.Timeouts, r.ThroughputMbit = s0.Samples, s0.Timeouts, s0.ThroughputMbit
		r.BulkBytes, r.ConnectTime = s0.BulkBytes, s0.ConnectTime
		r.BulkBytesTotal = 0
		for _, x := range sess {
			r.BulkBytesTotal += x.BulkBytesTotal
		}
		n := len(sess)
		if r.Arm == "tcp" {
			n *= 2
		}
		cc, gso := r.CongestionControl[0], len(r.QUICGSO) > 0
		r.CongestionControl, r.QUICGSO = nil, nil
		for range n {
			r.CongestionControl = append(r.CongestionControl, cc)
		}
		for range len(sess) {
			if gso {
				r.QUICGSO = append(r.QUICGSO, false)
			}
		}
	},
		spec{arm: "tcp", p95: []float64{0, 0, 0}, mbit: 9.4, connectMs: 161},
		spec{arm: "quic", p95: []float64{0, 0, 0}, mbit: 9.3, connectMs: 81},
		spec{arm: "quic-per-channel", p95: []float64{0, 0, 0}, mbit: 9.2, connectMs: 81.5},
	)
}

// cappedDisplay adds 80 ms / 10 Mbit at 0% loss with the display capped
// at half the link rate.
func (g *golden) cappedDisplay() {
	capped := goldenCell(80, 10, 0, "reno")
	capped.BulkCapFraction, capped.BulkRateCapBps = 0.5, 5_000_000
	g.arms(capped, nil,
		spec{arm: "tcp", p50: 81, p99: 95, p95: []float64{84, 84.5, 85}, mbit: 4.9, connectMs: 160.5},
		spec{arm: "quic", p50: 81, p99: 92, p95: []float64{83, 83.2, 84}, mbit: 4.9, connectMs: 80.4},
	)
}

// cubicSensitivity adds 80 ms / 10 Mbit at 0% loss with kernel TCP cubic:
// the sensitivity cell, with CPU figures on two of each arm's three runs.
func (g *golden) cubicSensitivity() {
	g.arms(goldenCell(80, 10, 0, "cubic"), func(r *results.Run) {
		if r.Repeat != 3 {
			r.ServerUsage = usage(300+7*float64(r.Repeat), 115, 18000)
			r.ClientUsage = usage(270, 100+3*float64(r.Repeat), 16000)
		}
	},
		spec{arm: "tcp", p50: 86, p99: 130, p95: []float64{100, 103, 104}, mbit: 9.3, connectMs: 160.8},
		spec{arm: "quic", p50: 81, p99: 100, p95: []float64{86, 86.6, 87.2}, mbit: 9.4, connectMs: 80.6},
	)
}
