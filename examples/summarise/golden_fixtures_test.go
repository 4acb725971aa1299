package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/gsocheck"
	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/plan"
	"github.com/shakenfist/quicbench/measure/report/reporttest"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/stats"
	"github.com/shakenfist/quicbench/transport"
)

// The experiments' fixtures under testdata/shapes: one work directory per
// experiment whose records the summary reads, written as its command
// would write them (cells from plan.Matrix.Plan, matrix.json beside
// the runs, the fields each kind of run fills in), with few repeats and
// few samples. They are committed; writeShapes rewrites them only under
// -regenerate-fixture, so the golden pins the files, not this code.

// shapesDir holds the experiments' work directories.
const shapesDir = "testdata/shapes"

// shapeN is the number of post-warm-up samples of a steady run.
const shapeN = 20

// shapeFixture is one experiment's work directory (or, with shards, its
// shards' directories).
type shapeFixture struct {
	name string
	m    plan.Matrix
	// shards, when above 1, splits the matrix into that many shard
	// directories, shard-0 ... shard-<n-1>.
	shards int
	// edit adjusts run i of the plan after the common fields are set;
	// returning false leaves the run out (not yet run).
	edit func(i int, rc plan.Run, r *results.Run) bool
	// extra writes other files into the work directory (strays).
	extra func(dir string) error
}

// shapeFixtures are the experiments' record shapes that the fixture in
// testdata/golden (reporttest.Golden) does not reach.
func shapeFixtures() []shapeFixture {
	return []shapeFixture{
		ccarmFixture(), sessionsFixture(), cpucostKeepFixture(), netemKeepFixture(),
		timevaryingFixture(), profilesFixture(), twoHostFixture(), shardsFixture(),
	}
}

// matrix builds a plan.Matrix as a command's flags would.
func matrix(profiles string, losses []float64, ccs string, arms string, repeats int) plan.Matrix {
	ps, err := shapedlink.ParseProfiles(profiles)
	if err != nil {
		panic(err)
	}
	var as []measure.Arm
	for _, a := range strings.Fields(arms) {
		as = append(as, measure.Arm(a))
	}
	w := spicelike.Defaults()
	return plan.Matrix{Profiles: ps, Losses: losses,
		CCs: strings.Fields(ccs), Arms: as, Repeats: repeats, Workload: w,
		Link: shapedlink.Options{Backend: shapedlink.BackendEmulator, Seed: 0, Offload: shapedlink.OffloadWire}}
}

// ccarmFixture is examples/ccarm: reno, cubic and bbr at 1% loss, tcp
// and quic. A bbr tcp run failed; a bbr socket read back cubic; strays:
// a run directory copied aside, a record copied into a repeat the matrix
// never ran, and a run.json outside any run's place.
func ccarmFixture() shapeFixture {
	return shapeFixture{
		name: "ccarm",
		m:    matrix("80:10", []float64{1}, "reno cubic bbr", "tcp quic", 2),
		edit: func(i int, rc plan.Run, r *results.Run) bool {
			if rc.Cell.CC == "bbr" && rc.Arm == "tcp" {
				switch rc.Repeat {
				case 2:
					fail(r, "client: dial tcp 198.18.0.1:4433: connect: connection refused (see client.log)")
				case 1:
					r.CongestionControl = []string{"server: bbr", "client: cubic"}
				}
			}
			return true
		},
		extra: func(dir string) error {
			m := ccarmFixture().m
			c := m.Plan()[0].Cell
			src := filepath.Join(results.RunDir(dir, c, "tcp", 1), results.RunFile)
			for _, dst := range []string{
				filepath.Join(dir, c.Dir(), "tcp", "r1.bak", results.RunFile),
				filepath.Join(results.RunDir(dir, c, "tcp", 3), results.RunFile),
				filepath.Join(dir, "notes", results.RunFile),
			} {
				if err := copyFile(src, dst); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// sessionsFixture is examples/sessions: one and four sessions at 1% loss,
// tcp and quic. Every run records its sessions (a one-session cell too);
// a session reports a channel error and timeouts; a four-session tcp run
// failed, so that arm has one measured repeat.
func sessionsFixture() shapeFixture {
	m := matrix("80:10", []float64{1}, "reno", "tcp quic", 2)
	m.Sessions = []int{1, 4}
	return shapeFixture{
		name: "sessions",
		m:    m,
		edit: func(i int, rc plan.Run, r *results.Run) bool {
			n := rc.Sessions
			base := r.ConnectTime
			var sess []results.SessionResult
			var total int64
			var ccs []string
			var gso []bool
			for k := range n {
				p95 := r95(rc) + 6*float64(k) + 3*float64(n)
				mbit := 9.4 / float64(n) * (1 + 0.08*(float64(k)-float64(n-1)/2)) * (1 - 0.01*float64(rc.Repeat))
				s := results.SessionResult{
					Index:          k,
					Samples:        reporttest.Repeat(rc.Cell.RTTms+2+float64(k), p95, p95+60, shapeN),
					ThroughputMbit: mbit,
					BulkBytes:      int64(mbit * 1e6 / 8 * 40),
					BulkBytesTotal: int64(mbit * 1e6 / 8 * 45),
					ConnectTime:    base + time.Duration(k)*700*time.Microsecond,
				}
				if n == 4 && k == 3 && rc.Arm == "quic" && rc.Repeat == 1 {
					s.Timeouts = 2
					s.ChannelErrors = []string{"client inputs: echo 117: no reply within 10s"}
				}
				total += s.BulkBytesTotal
				sess = append(sess, s)
				ccs = append(ccs, r.CongestionControl...)
				gso = append(gso, r.QUICGSO...)
			}
			s0 := sess[0]
			r.Sessions = sess
			r.Samples, r.Timeouts, r.ThroughputMbit, r.BulkBytes, r.ConnectTime = s0.Samples, s0.Timeouts, s0.ThroughputMbit, s0.BulkBytes, s0.ConnectTime
			r.CongestionControl, r.QUICGSO = ccs, gso
			if n > 1 {
				r.BulkBytesTotal = total
				for _, s := range sess[1:] {
					for _, e := range s.ChannelErrors {
						r.ChannelErrors = append(r.ChannelErrors, fmt.Sprintf("session %d: %s", s.Index, e))
					}
				}
			}
			if n == 4 && rc.Arm == "tcp" && rc.Repeat == 2 {
				fail(r, "client: 4 sessions: session 2: dial tcp 198.18.0.1:4433: i/o timeout (see client.log)")
			}
			return true
		},
	}
}

// cpucostKeepFixture is examples/cpucost with -offload keep on the
// emulator: a fast link, CPU time on every run, both offload checks, and
// kernel TCP's super-packets on the wire.
func cpucostKeepFixture() shapeFixture {
	m := matrix("5:1000", []float64{0}, "reno", "tcp quic quic-per-channel", 2)
	m.Link.Offload = shapedlink.OffloadKeep
	return shapeFixture{
		name: "cpucost-keep",
		m:    m,
		edit: func(i int, rc plan.Run, r *results.Run) bool {
			cpu := 900.0
			if rc.Arm.QUIC() {
				cpu = 2600 + 150*float64(rc.Repeat)
				r.GSOCounters = &gsocheck.Result{Verdict: gsocheck.Off, Reason: "no packet longer than 1442 bytes", Expected: 1442,
					Used: 700000 + i, Total: 700000 + i, PooledMean: 1436.43 + 0.001*float64(i)}
			}
			r.ServerUsage = &results.Usage{User: msDur(cpu * 0.6), System: msDur(cpu * 0.4), MaxRSSKiB: 24576 + int64(i)*128}
			r.ClientUsage = &results.Usage{User: msDur(cpu * 0.5), System: msDur(cpu * 0.3), MaxRSSKiB: 20480}
			return true
		},
	}
}

// netemKeepFixture is a matrix with -offload keep on netem, which judges
// a super-packet whole: the summary warns.
func netemKeepFixture() shapeFixture {
	m := matrix("20:100", []float64{0}, "reno", "tcp quic", 1)
	m.Link = shapedlink.Options{Backend: shapedlink.BackendNetem, Offload: shapedlink.OffloadKeep}
	return shapeFixture{name: "netem-keep", m: m}
}

// timevaryingFixture is a matrix over links with a schedule: a blackout
// of both directions every 10 s and the downlink's rate stepping to a
// fifth for 5 s, tcp and quic. Every run records its changes and its
// samples' start; tcp's second blackout in r2 never recovers, and the
// step's second change comes too late to close before the run ends.
func timevaryingFixture() shapeFixture {
	m := matrix("80:10,schedule=blackout:300ms/10s 80:10,down.schedule=step:10/2/5s/20s", []float64{0}, "reno", "tcp quic", 2)
	m.Workload.Duration = 30 * time.Second
	return shapeFixture{
		name: "timevarying",
		m:    m,
		edit: func(i int, rc plan.Run, r *results.Run) bool {
			scheduled(rc, r)
			return true
		},
	}
}

// profilesFixture is the profile options the aqm and lossmodel matrices
// use: a queue discipline with ECN, a Gilbert-Elliott loss model (the
// cell's loss is the model's own), an asymmetric rate and a queue limit.
func profilesFixture() shapeFixture {
	return shapeFixture{
		name: "profiles",
		m:    matrix("80:10@200 80:10,qdisc=codel,ecn=on 80:10,loss=ge:0.33667/33.333 80:20,up.rate=2", []float64{1}, "reno", "tcp quic", 2),
	}
}

// twoHostFixture is a matrix between two hosts over the path as found:
// no link, a probe of the path before each run, no offload evidence.
func twoHostFixture() shapeFixture {
	m := matrix("80:10", nil, "reno", "tcp quic", 2)
	m.Profiles, m.Link = nil, shapedlink.Options{}
	m.Remote = "198.18.0.2:7400"
	return shapeFixture{
		name: "two-host",
		m:    m,
		edit: func(i int, rc plan.Run, r *results.Run) bool {
			r.Link = results.Link{Backend: "none", Applied: []string{"nothing emulated: the path to the daemon at 198.18.0.2:7400 as found"}}
			r.Link.Probe = &results.PathProbe{Peer: "198.18.0.2:7401", Sent: 50, Answered: 50 - i%2, LossPct: float64(i%2) * 2,
				RTTMinMs: 61.2, RTTP50Ms: 62 + 0.1*float64(i), RTTP90Ms: 63.5, RTTMaxMs: 70.1, At: r.Started.Add(-2 * time.Second)}
			r.Host = json.RawMessage(`{"module":"github.com/shakenfist/quicbench","version":"(devel)","go_version":"go1.26.0"}`)
			r.GSOQueue, r.GSOCounters = nil, nil
			return true
		},
	}
}

// shardsFixture is the headline's second profile run as two shards, one
// run of which has not finished yet.
func shardsFixture() shapeFixture {
	return shapeFixture{
		name:   "shards",
		m:      matrix("150:2", []float64{0, 1}, "reno", "tcp quic quic-per-channel", 2),
		shards: 2,
		edit: func(i int, rc plan.Run, r *results.Run) bool {
			return !(rc.Cell.LossPct == 1 && rc.Arm == "quic-per-channel" && rc.Repeat == 2)
		},
	}
}

// writeShapes rewrites every fixture under shapesDir.
func writeShapes() error {
	if err := os.RemoveAll(shapesDir); err != nil {
		return err
	}
	for _, f := range shapeFixtures() {
		if err := f.write(filepath.Join(shapesDir, f.name)); err != nil {
			return fmt.Errorf("fixture %s: %w", f.name, err)
		}
	}
	return nil
}

func (f shapeFixture) write(root string) error {
	n := max(1, f.shards)
	start := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	i := 0
	for s := range n {
		m := f.m
		dir := root
		if f.shards > 1 {
			dir = filepath.Join(root, fmt.Sprintf("shard-%d", s))
			m.Shard = plan.Shard{Index: s, Count: n}
		}
		m.Workdir = dir
		if err := results.WriteJSON(filepath.Join(dir, "matrix.json"), matrixJSON(m)); err != nil {
			return err
		}
		for _, rc := range m.Plan() {
			r := baseRun(i, rc, start.Add(time.Duration(i)*time.Minute))
			i++
			if f.edit != nil && !f.edit(i-1, rc, &r) {
				continue
			}
			if err := r.Validate(); err != nil {
				return fmt.Errorf("%s: %w", rc.Dir(), err)
			}
			if err := results.WriteJSON(filepath.Join(results.RunDir(dir, rc.Cell, string(rc.Arm), rc.Repeat), results.RunFile), r); err != nil {
				return err
			}
		}
	}
	if f.extra != nil {
		return f.extra(root)
	}
	return nil
}

// matrixJSON is matrix.json as the matrix commands write it.
func matrixJSON(m plan.Matrix) map[string]any {
	rec := map[string]any{"profiles": profileTexts(m.Profiles), "losses": m.Losses, "ccs": m.CCs, "arms": m.Arms,
		"repeats": m.Repeats, "workload": m.Workload, "workdir": m.Workdir, "qlog": false}
	if m.Link.Backend != "" {
		rec["backend"] = m.Link.Backend
	}
	if m.Link.Offload == shapedlink.OffloadKeep {
		rec["offload"] = "keep"
	}
	if len(m.Sessions) > 0 {
		rec["sessions"] = m.Sessions
	}
	if m.Shard.Count > 1 {
		rec["shard"] = fmt.Sprintf("%d/%d", m.Shard.Index, m.Shard.Count)
	}
	if m.Remote != "" {
		rec["remote"] = m.Remote
	}
	return rec
}

// r95 is a run's p95 (ms): tcp above quic as loss grows, a little spread
// over repeats.
func r95(rc plan.Run) float64 {
	base := rc.Cell.RTTms
	if base == 0 {
		base = 62 // the two-host path
	}
	p := base*1.1 + 12*rc.Cell.LossPct
	switch rc.Arm {
	case "tcp":
		p += 4 + 9*rc.Cell.LossPct
	case "quic-per-channel":
		p += 2
	}
	if rc.Cell.CC == "bbr" {
		p -= 5
	}
	return p + 0.7*float64(rc.Repeat) + 0.3*float64(rc.Repeat*rc.Repeat%3)
}

// baseRun is run i of a plan as its command records it: steady samples,
// both ends' transport state, what the sockets reported, the link as
// applied with the emulator's counters, and QUIC's offload evidence.
func baseRun(i int, rc plan.Run, started time.Time) results.Run {
	w := rc.Workload
	c := rc.Cell
	p95 := r95(rc)
	p50 := max(c.RTTms, 60) + 1.5
	mbit := c.RateMbit * (0.94 - 0.01*c.LossPct*c.RateMbit/10) * (1 + 0.004*float64(rc.Repeat-1))
	if c.RateMbit == 0 {
		mbit = 41.5 + 0.3*float64(rc.Repeat)
	}
	if c.BulkCapFraction != 0 {
		mbit = min(mbit, float64(c.BulkRateCapBps)/1e6*0.98)
	}
	connect := 2*c.RTTms + 0.4
	if rc.Arm.QUIC() {
		connect = c.RTTms + 0.9
	}
	if c.RateMbit == 0 {
		connect = 125 + 0.2*float64(i%3)
	}
	r := results.Run{
		Schema: results.SchemaVersion, Cell: c, Arm: string(rc.Arm), Repeat: rc.Repeat,
		Started: started, Finished: started.Add(w.Duration + 1500*time.Millisecond),
		Duration: w.Duration, Warmup: w.Warmup,
		Samples:        reporttest.Repeat(p50, p95, p95+40+20*c.LossPct, shapeN),
		SamplesStart:   started.Add(900 * time.Millisecond),
		ThroughputMbit: mbit,
		BulkBytes:      int64(mbit * 1e6 / 8 * (w.Duration - w.Warmup).Seconds()),
		BulkBytesTotal: int64(mbit * 1e6 / 8 * w.Duration.Seconds()),
		ConnectTime:    msDur(connect + 0.05*float64(rc.Repeat)),
	}
	if c.Sessions == 0 && c.RTTms > 0 {
		r.Timeouts = int(c.LossPct) * (rc.Repeat % 2) // a few under loss
	}
	server, client := transport.State{Arm: transport.Arm(rc.Arm), Role: "server", Channels: 5, Started: r.SamplesStart.Add(-msDur(connect))},
		transport.State{Arm: transport.Arm(rc.Arm), Role: "client", Channels: 5, Started: r.SamplesStart.Add(-msDur(connect)), ConnectTime: r.ConnectTime}
	for _, st := range []*transport.State{&server, &client} {
		st.CongestionControl, st.RequestedCongestionControl = c.CC, c.CC
		if rc.Arm.QUIC() {
			st.CongestionControl, st.RequestedCongestionControl = "newreno (quic-go, fixed)", ""
		}
		r.CongestionControl = append(r.CongestionControl, st.Role+": "+st.CongestionControl)
	}
	r.Server, r.Client = mustJSON(server), mustJSON(client)
	if rc.Arm.QUIC() {
		r.QUICGSO = []bool{false}
	}

	if rc.Cell.Profile == results.PathProfile {
		return r // twoHostFixture fills in the rest
	}
	p := rc.Profile
	limit := p.Direction(shapedlink.Down).Limit
	if limit == 0 {
		limit = shapedlink.DefaultLimit(p.RateMbit, p.RTT)
	}
	backend := string(rc.Link.Backend)
	r.Link = results.Link{Backend: backend, Limit: limit}
	if rc.Link.Offload == shapedlink.OffloadKeep {
		r.Link.Offload = string(shapedlink.OffloadKeep)
	}
	for k, end := range []string{"server qbsrv0 -> client", "client qbcli0 -> server"} {
		d := p.Direction(shapedlink.Down)
		if k == 1 {
			d = p.Direction(shapedlink.Up)
		}
		line := fmt.Sprintf("%s: %s delay %gms rate %gMbit limit %d", end, backend, float64(d.Delay)/1e6, d.RateMbit, limit)
		if c.LossPct > 0 {
			line += fmt.Sprintf(" loss %g%%", c.LossPct)
		}
		if backend == string(shapedlink.BackendEmulator) {
			seed := uint64(1000003*(i+1) + 17*k)
			if k == 0 {
				r.Link.Seed = seed
			}
			line += fmt.Sprintf(" seed %d", seed)
		}
		if r.Link.Offload != "" {
			line += " offload keep"
		}
		r.Link.Applied = append(r.Link.Applied, line)
	}
	r.Host = hostJSON(rc, r.Link)
	if backend == string(shapedlink.BackendEmulator) {
		fwd := uint64(mbit * 1e6 / 8 / 1442 * w.Duration.Seconds())
		r.Link.Shaper = &shapedlink.ShaperReport{Priority: "SCHED_FIFO 1, nice 0 (inherited)", Directions: []shapedlink.ShaperStats{
			{Direction: "server->client", ShaperCounters: shapedlink.ShaperCounters{Received: fwd + 40, Forwarded: fwd, LimitDrops: 40}, LateP50Ms: 0.04, LateP99Ms: 0.18, LateMaxMs: 0.9},
			{Direction: "client->server", ShaperCounters: shapedlink.ShaperCounters{Received: fwd / 3, Forwarded: fwd / 3}, LateP50Ms: 0.01, LateP99Ms: 0.07, LateMaxMs: 0.4},
		}}
	}
	if rc.Arm.QUIC() {
		r.GSOQueue = &gsocheck.Result{Verdict: gsocheck.Off, Reason: "no sample exceeded 1442 bytes per slot", Expected: 1442,
			Used: 300 + i, Total: 450, PooledMean: 1436.1 + 0.01*float64(i), Median: 1441, Max: 1442}
	}
	return r
}

// hostJSON is a host state record in shapedlink.HostState's field order.
func hostJSON(rc plan.Run, l results.Link) json.RawMessage {
	keep := l.Offload != ""
	segs := 1
	if keep {
		segs = 65535
	}
	type dev struct {
		Namespace  string `json:"namespace"`
		Device     string `json:"device"`
		MTU        int    `json:"mtu"`
		GSOMaxSegs int    `json:"gso_max_segs"`
		TSO        bool   `json:"tso"`
		GSO        bool   `json:"gso"`
		GRO        bool   `json:"gro"`
	}
	h := struct {
		Kernel      string   `json:"kernel_release"`
		Available   []string `json:"tcp_available_congestion_control"`
		Default     string   `json:"tcp_congestion_control"`
		ECN         string   `json:"tcp_ecn"`
		Netem       bool     `json:"netem_available"`
		Backend     string   `json:"backend"`
		OffloadMode string   `json:"offload_mode,omitempty"`
		Mode        string   `json:"mode"`
		Profile     string   `json:"profile"`
		Limit       int      `json:"limit"`
		Applied     []string `json:"applied"`
		Offload     []dev    `json:"offload"`
		GoVersion   string   `json:"go_version"`
	}{
		Kernel: "6.18.0-fixture", Available: []string{"reno", "bbr", "cubic"}, Default: "bbr", ECN: "2",
		Netem: l.Backend == string(shapedlink.BackendNetem), Backend: l.Backend, OffloadMode: l.Offload, Mode: "root",
		Profile: rc.Profile.String(), Limit: l.Limit, Applied: l.Applied,
		Offload: []dev{
			{"server", "qbsrv0", 1500, segs, keep, keep, false},
			{"client", "qbcli0", 1500, segs, keep, keep, false},
		},
		GoVersion: "go1.26.0",
	}
	return mustJSON(h)
}

// scheduled gives a run over a scheduled link its changes and samples
// every 200 ms from the channels' opening to the run's end: a steady
// round trip, the blackouts' and steps' delays on top, and the time each
// arm takes to come back.
func scheduled(rc plan.Run, r *results.Run) {
	const gap = 250 * time.Millisecond
	r.Link.ScheduleStart = r.SamplesStart.Add(-400 * time.Millisecond)
	blackout := strings.Contains(rc.Cell.Profile, "blackout")
	type span struct{ at, end time.Duration } // offsets from SamplesStart
	var spans []span
	for _, t := range []time.Duration{10 * time.Second, 20 * time.Second, 30 * time.Second} {
		at := r.Link.ScheduleStart.Add(t)
		if blackout {
			if t == 30*time.Second {
				break
			}
			for _, set := range []string{"down", "up"} {
				for _, dir := range []string{"down", "up"} {
					when := at
					if set == "up" {
						when = at.Add(300 * time.Millisecond)
					}
					r.Link.Changes = append(r.Link.Changes, shapedlink.AppliedChange{At: when, Dir: dir, Set: set})
				}
			}
			spans = append(spans, span{at.Sub(r.SamplesStart), at.Add(300 * time.Millisecond).Sub(r.SamplesStart)})
			continue
		}
		if t == 20*time.Second {
			continue // the step repeats every 20 s: at 10 s and 30 s
		}
		r.Link.Changes = append(r.Link.Changes, shapedlink.AppliedChange{At: at, Dir: "down", Set: "rate", Value: 2})
		if end := at.Add(5 * time.Second); end.Sub(r.SamplesStart) < r.Duration {
			r.Link.Changes = append(r.Link.Changes, shapedlink.AppliedChange{At: end, Dir: "down", Set: "rate", Value: 10})
		}
		spans = append(spans, span{at.Sub(r.SamplesStart), at.Add(5 * time.Second).Sub(r.SamplesStart)})
	}
	tcp := rc.Arm == "tcp"
	back := 300 * time.Millisecond // how long after an event's end the round trip stays high
	if tcp {
		back = 1400 * time.Millisecond
	}
	base := rc.Cell.RTTms + 1
	var samples []stats.Sample
	for o := time.Duration(0); o < r.Duration; o += gap {
		rtt := base + 0.4*float64(int(o/gap)%4)
		for k, s := range spans {
			switch {
			case o >= s.at && o < s.end && blackout:
				rtt += float64(s.end-o)/1e6 + 40
			case o >= s.at && o < s.end:
				// The queue fills at a fifth of the rate.
				rtt += math.Min(float64(o-s.at)/float64(s.end-s.at)*500, 480)
			case o >= s.end && (o < s.end+back || tcp && rc.Repeat == 2 && k == len(spans)-1):
				rtt *= 1.6
			}
		}
		samples = append(samples, stats.Sample{Offset: o, RTT: msDur(rtt)})
	}
	r.Samples = samples
	r.BulkBytes = int64(r.ThroughputMbit * 1e6 / 8 * (r.Duration - r.Warmup).Seconds())
}

// fail makes r a failed run, as RecordRun leaves one: the error, and
// nothing the workload would have measured.
func fail(r *results.Run, why string) {
	r.Failed = why
	r.Samples, r.SamplesStart, r.Timeouts, r.ThroughputMbit, r.BulkBytes, r.BulkBytesTotal = nil, time.Time{}, 0, 0, 0, 0
	r.ConnectTime, r.Client, r.Sessions, r.QUICGSO, r.GSOQueue, r.GSOCounters = 0, nil, nil, nil, nil, nil
	r.CongestionControl = r.CongestionControl[:1]
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func msDur(ms float64) time.Duration { return time.Duration(math.Round(ms * 1e6)) }

// profileTexts are profiles as matrix.json records them.
func profileTexts(ps []shapedlink.Profile) []string {
	var texts []string
	for _, p := range ps {
		texts = append(texts, p.String())
	}
	return texts
}
