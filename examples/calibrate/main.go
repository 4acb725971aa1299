package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/shakenfist/quicbench/internal/buildinfo"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
)

// Result is one profile's calibration; the JSON output is a Report.
type Result struct {
	Profile  string   `json:"profile"`
	Backend  string   `json:"backend"`
	Applied  []string `json:"applied"`
	Priority string   `json:"emulator_priority,omitempty"`

	// Ping is the link's own idle round trip (ICMP echoes answered by the
	// server's kernel, timed with kernel receive timestamps), the figure
	// the targets apply to; Bare is the same probe over an unshaped veth
	// pair with the same offloads, measured just before, which is what
	// the machine adds to any round trip. Errors are measured minus
	// expected (the RTT plus the probe frame's serialisation each way).
	Ping *Probe `json:"ping,omitempty"`
	Bare *Probe `json:"bare,omitempty"`
	// ShaperLateP50Ms and ShaperLateP99Ms are the emulator's own record of
	// how late it wrote the probe's frames (the worse direction).
	ShaperLateP50Ms float64 `json:"shaper_late_p50_ms,omitempty"`
	ShaperLateP99Ms float64 `json:"shaper_late_p99_ms,omitempty"`
	ShaperLateMaxMs float64 `json:"shaper_late_max_ms,omitempty"`

	// The UDP echo is what an application sees: the same idle round trip
	// through two processes' sockets, including their wake-ups.
	ExpectedRTTms float64 `json:"expected_rtt_ms"`
	Echoes        int     `json:"echoes_sent"`
	Answered      int     `json:"echoes_answered"`
	RTTMinMs      float64 `json:"rtt_min_ms"`
	RTTP50Ms      float64 `json:"rtt_p50_ms"`
	RTTP99Ms      float64 `json:"rtt_p99_ms"`
	RTTP50ErrMs   float64 `json:"rtt_p50_error_ms"`
	RTTP99ErrMs   float64 `json:"rtt_p99_error_ms"`
	// Baseline is the same echo tool over loopback inside the server's
	// namespace: what the measuring processes themselves add.
	BaselineP50Ms float64 `json:"echo_loopback_p50_ms"`
	BaselineP99Ms float64 `json:"echo_loopback_p99_ms"`

	Bulk []Bulk `json:"bulk"`

	LossSent      int     `json:"loss_sent"`
	LossDelivered int     `json:"loss_delivered"`
	LossPct       float64 `json:"loss_measured_pct"`
	LossLoPct     float64 `json:"loss_ci95_lo_pct"`
	LossHiPct     float64 `json:"loss_ci95_hi_pct"`
	LossInside    bool    `json:"loss_configured_inside_ci"`
	// LossMeanBurst is the mean length of runs of lost datagrams, and
	// LossBurstWant what the configured loss model gives (1/(1-p) for
	// independent loss, 100/r for Gilbert-Elliott); the interval above is
	// widened for the bursts' correlation.
	LossMeanBurst float64 `json:"loss_mean_burst,omitempty"`
	LossBurstWant float64 `json:"loss_burst_configured,omitempty"`
	// LossShaperDrops is what the shaping itself dropped during the loss
	// run (loss and limit); the rest of the shortfall was lost elsewhere.
	LossShaperDrops uint64 `json:"loss_shaper_drops"`
	// With dup or reorder in the down direction: the share of the loss
	// run's datagrams that arrived twice, or in under half the one-way
	// delay (sent at once), with its 95% interval, beside the configured
	// share (for reordering with a gap, 1/(gap-1 + 100/pct)).
	DupPct         float64 `json:"dup_measured_pct,omitempty"`
	DupLoPct       float64 `json:"dup_ci95_lo_pct,omitempty"`
	DupHiPct       float64 `json:"dup_ci95_hi_pct,omitempty"`
	DupWantPct     float64 `json:"dup_configured_pct,omitempty"`
	ReorderPct     float64 `json:"reorder_measured_pct,omitempty"`
	ReorderLoPct   float64 `json:"reorder_ci95_lo_pct,omitempty"`
	ReorderHiPct   float64 `json:"reorder_ci95_hi_pct,omitempty"`
	ReorderWantPct float64 `json:"reorder_configured_pct,omitempty"`

	// Jitter is the down direction's delay variation against its
	// configured distribution, for a profile with jitter.
	Jitter *JitterFit `json:"jitter,omitempty"`
	// TimeVarying is the trace's and the schedule's fidelity, for a
	// profile whose down direction has one (the bulk flows and the loss
	// run, which assume a fixed link, are then skipped).
	TimeVarying *TimeVarying `json:"time_varying,omitempty"`

	CPUPerPacketNs float64 `json:"emulator_cpu_ns_per_packet,omitempty"`
	Error          string  `json:"error,omitempty"`
}

// TimeVarying is how faithfully a link followed its trace and schedule
// (down direction). TraceDeliveredPct is the frames that left the link
// under a saturating flood, as a share of what the trace's opportunities
// carry, over TraceWindows whole seconds, and TraceMaxErrFrames the worst
// second's difference in frames. EdgeErrMs are, for each of Blackouts
// drop blackouts, the send time of the first datagram lost minus the
// scheduled down time and of the first delivered again minus the
// scheduled up time (datagrams 1 ms apart, so each is within a
// millisecond of the true edge). Changes counts the schedule's changes
// applied; MaxAckLagMs is netem's longest wait for the kernel to
// acknowledge one, ShaperMaxLagMs the emulator's longest delay in getting
// to one (its changes apply at their time regardless).
type TimeVarying struct {
	TraceWindows      int       `json:"trace_windows,omitempty"`
	TraceDeliveredPct float64   `json:"trace_delivered_pct,omitempty"`
	TraceMaxErrFrames float64   `json:"trace_max_error_frames,omitempty"`
	Blackouts         int       `json:"blackouts,omitempty"`
	EdgeErrMs         []float64 `json:"edge_error_ms,omitempty"`
	Changes           int       `json:"changes"`
	MaxAckLagMs       float64   `json:"max_ack_lag_ms,omitempty"`
	ShaperMaxLagMs    float64   `json:"shaper_max_lag_ms,omitempty"`
	Error             string    `json:"error,omitempty"`
}

// JitterFit compares the one-way delays of sparse probes (GapMs apart)
// with the configured jitter: each probe's delay beyond the configured
// one-way delay, its serialisation and half the bare round trip, against
// the distribution netem draws from (Direction.JitterCDF). KS is the
// Kolmogorov-Smirnov distance between the two, KSCrit its 5% critical
// value for Probes samples (1.358/sqrt(n)); Fits is KS <= KSCrit. The
// quantiles are measured beside configured, in ms.
type JitterFit struct {
	Probes int       `json:"probes"`
	GapMs  float64   `json:"gap_ms"`
	KS     float64   `json:"ks"`
	KSCrit float64   `json:"ks_crit_5pct"`
	Fits   bool      `json:"fits"`
	Levels []float64 `json:"levels"`
	Meas   []float64 `json:"measured_ms"`
	Want   []float64 `json:"configured_ms"`
}

// Probe is one series of idle ICMP round trips.
type Probe struct {
	Sent       int     `json:"sent"`
	Answered   int     `json:"answered"`
	IntervalMs float64 `json:"interval_ms"`
	ExpectedMs float64 `json:"expected_ms"`
	MinErrMs   float64 `json:"min_error_ms"`
	P50ErrMs   float64 `json:"p50_error_ms"`
	P90ErrMs   float64 `json:"p90_error_ms"`
	P99ErrMs   float64 `json:"p99_error_ms"`
	MaxErrMs   float64 `json:"max_error_ms"`
	Error      string  `json:"error,omitempty"`
}

// Bulk is one bulk TCP flow.
type Bulk struct {
	CC          string  `json:"cc"`
	Buffers     string  `json:"buffers"`
	GoodputMbit float64 `json:"goodput_mbit"`
	GoodputPct  float64 `json:"goodput_pct_of_rate"`
	WirePct     float64 `json:"wire_pct_of_rate"`
	// WireFrom says where WirePct came from: "shaper" (the emulator's own
	// count of the bytes it forwarded in the window) or "estimate"
	// (goodput scaled by a full frame over its payload, for netem).
	WireFrom string `json:"wire_from,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Sweep is one step of the highest-rate search.
type Sweep struct {
	RateMbit float64 `json:"rate_mbit"`
	Bulk     Bulk    `json:"bulk"`
	Cubic    Bulk    `json:"cubic"`
	CPUNs    float64 `json:"emulator_cpu_ns_per_packet,omitempty"`
	Error    string  `json:"error,omitempty"`
}

// Iperf is one iperf3 flow across a link (or the bare veth pair).
type Iperf struct {
	Label       string  `json:"label"`
	Profile     string  `json:"profile"`
	Backend     string  `json:"backend"`
	RateMbit    float64 `json:"rate_mbit,omitempty"` // 0: no rate limit
	Mbit        float64 `json:"goodput_mbit"`        // iperf3's receiver
	Retransmits int     `json:"retransmits"`
	GoodputPct  float64 `json:"goodput_pct_of_rate,omitempty"`
	WirePct     float64 `json:"wire_pct_of_rate,omitempty"`
	WireFrom    string  `json:"wire_from,omitempty"`
	// CPUNsPerFrame is the emulator's CPU time over the flow divided by
	// the frames it forwarded (both directions).
	CPUNsPerFrame float64 `json:"emulator_cpu_ns_per_frame,omitempty"`
	Error         string  `json:"error,omitempty"`
}

// iperfTarget is the wire share of the rate an iperf3 flow must reach:
// 95% up to 1 Gbit/s, 90% above.
func iperfTarget(rateMbit float64) float64 {
	if rateMbit > 1000 {
		return 90
	}
	return 95
}

// Report is everything calibrate measured.
type Report struct {
	Started time.Time `json:"started"`
	Host    string    `json:"host"`
	Load    string    `json:"loadavg"`
	// Build is which code made the report (its commit, and where that
	// came from), so a figure can be traced to the code that measured it.
	Build         buildinfo.Info `json:"build"`
	Results       []Result       `json:"results"`
	Sweep         []Sweep        `json:"sweep,omitempty"`
	HighestOKMbit float64        `json:"highest_rate_within_5pct_mbit"`
	Iperf         []Iperf        `json:"iperf3,omitempty"`
	Qdisc         []Qdisc        `json:"qdisc,omitempty"`
}

// Qdisc is one queue discipline under one Cubic flow saturating the down
// direction, with a sparse flow of echoes beside it (-qdisc).
type Qdisc struct {
	Discipline string   `json:"discipline"` // fifo (netem's drop-tail), codel, fq_codel
	Profile    string   `json:"profile"`
	Applied    []string `json:"applied,omitempty"`
	FlowMbit   float64  `json:"flow_mbit"`
	// The standing queue: the time a packet joining the down queue waits
	// for the rate, from the shaper's held bytes sampled every 10 ms
	// (held*8/rate minus the one-way delay the delay line accounts for).
	StandingP50Ms float64 `json:"standing_p50_ms"`
	StandingP95Ms float64 `json:"standing_p95_ms"`
	Samples       int     `json:"samples"`
	// The sparse flow: echoes 10 ms apart, their round trip beyond the
	// configured one.
	SparseP50Ms float64 `json:"sparse_extra_p50_ms"`
	SparseP95Ms float64 `json:"sparse_extra_p95_ms"`
	Echoes      int     `json:"echoes"`
	EchoesSent  int     `json:"echoes_sent"`
	LimitDrops  uint64  `json:"limit_drops"`
	QueueDrops  uint64  `json:"queue_drops"`
	CoDelDrops  uint64  `json:"codel_drops"`
	ECNMarks    uint64  `json:"ecn_marks"`
	Error       string  `json:"error,omitempty"`
}

type config struct {
	profiles string
	backend  string
	echoes   int
	interval time.Duration
	bare     bool
	bulk     time.Duration
	lossPkts int
	sweep    string
	iperf    string
	qdisc    string
	qdiscAt  string
	json     bool
	seed     uint64
	render   string
	// jitterProbes is how many sparse one-way probes measure a profile's
	// jitter (only for profiles with jitter).
	jitterProbes int
	// timeVarying is how long the trace and schedule measurements run.
	timeVarying time.Duration
}

func main() {
	var c config
	flag.StringVar(&c.profiles, "profiles", "80:10 80:10:1 150:2 150:2:1 20:100 20:100:1 5:1000 5:1000:1",
		"profiles to calibrate (shapedlink grammar rtt_ms:rate_mbit[:loss_pct][@limit_pkts], space-separated)")
	flag.StringVar(&c.backend, "backend", "", `shaping backend: "" (auto: netem if the kernel has it), "netem" or "emulator"`)
	flag.IntVar(&c.echoes, "echoes", 200, "idle round trips per profile, for each probe (at least 200 for the targets)")
	flag.DurationVar(&c.interval, "interval", 10*time.Millisecond, "spacing of the idle round-trip probes")
	flag.BoolVar(&c.bare, "bare", true, "measure the same ICMP probe over an unshaped veth pair before each profile (the machine's own share of the round trip)")
	flag.DurationVar(&c.bulk, "bulk", 9*time.Second, "duration of each bulk TCP flow (the first third is discarded)")
	flag.IntVar(&c.lossPkts, "losspkts", 4000, "datagrams sent for the loss measurement")
	flag.DurationVar(&c.timeVarying, "timevarying", 12*time.Second, "how long a profile with a trace or a schedule (down) is flooded or probed to measure it")
	flag.IntVar(&c.jitterProbes, "jitter-probes", 400, "one-way probes measuring a jittered profile's delay distribution, 4x the jitter apart (0 skips it)")
	flag.StringVar(&c.sweep, "sweep", "200 500 1000 2000", `rates (Mbit/s) for the highest-sustained-rate search at 5 ms RTT; "" skips it`)
	flag.StringVar(&c.iperf, "iperf3", "", `rates (Mbit/s) at 5 ms RTT for one iperf3 Cubic flow each, plus an unlimited link and a bare veth pair, e.g. "10 100 1000 2000"; needs iperf3`)
	flag.StringVar(&c.qdisc, "qdisc", "", `queue disciplines to measure under one saturating Cubic flow with a sparse flow beside it, e.g. "fifo codel fq_codel"; "" skips it`)
	flag.StringVar(&c.qdiscAt, "qdisc-profile", "80:10", "the profile the -qdisc measurements use (the discipline is added to both directions)")
	flag.BoolVar(&c.json, "json", false, "print the figures as JSON instead of a table")
	flag.Uint64Var(&c.seed, "seed", 1, "emulator loss seed (0: random); recorded in the applied lines")
	flag.StringVar(&c.render, "render", "", "print the table for a report saved with -json (measures nothing)")
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintf(os.Stderr, "calibrate: unexpected arguments %q; see -h\n", flag.Args())
		os.Exit(2)
	}
	if c.echoes < 1 || c.lossPkts < 1 || c.jitterProbes < 0 || c.bulk < 300*time.Millisecond || c.interval < time.Millisecond || c.interval > time.Second {
		fmt.Fprintln(os.Stderr, "calibrate: -echoes and -losspkts must be positive, -jitter-probes not negative, -bulk at least 300ms and -interval between 1ms and 1s")
		os.Exit(2)
	}
	if c.render != "" {
		b, err := os.ReadFile(c.render)
		if err != nil {
			fmt.Fprintln(os.Stderr, "calibrate:", err)
			os.Exit(1)
		}
		var rep Report
		if err := json.Unmarshal(b, &rep); err != nil {
			fmt.Fprintf(os.Stderr, "calibrate: %s is not a calibrate -json report: %v\n", c.render, err)
			os.Exit(1)
		}
		printTable(os.Stdout, rep)
		if failed, total := rep.failures(); len(failed) > 0 {
			// Rendering measures nothing, so it does not fail; it says
			// what the report holds.
			fmt.Fprintf(os.Stderr, "calibrate: the report records %s\n", failureLine(failed, total))
		}
		return
	}
	// Building links needs privilege: as an ordinary user this re-executes
	// the command inside a user and network namespace of its own and exits
	// with its status.
	if err := prepare(); err != nil {
		fmt.Fprintln(os.Stderr, "calibrate:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	rep, err := run(ctx, c, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "calibrate:", err)
		if ctx.Err() != nil {
			os.Exit(130) // interrupted
		}
		os.Exit(1)
	}
	if c.json {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintln(os.Stderr, "calibrate:", err)
			os.Exit(1)
		}
	} else {
		printTable(os.Stdout, rep)
	}
	if failed, total := rep.failures(); len(failed) > 0 {
		fmt.Fprintf(os.Stderr, "calibrate: %s; the figures above are what was measured\n", failureLine(failed, total))
		os.Exit(1)
	}
}

// failures names the measurements in rep that failed, out of total. A
// measurement is one profile's calibration (its link, echoes, both bulk
// flows and the loss run) or one rate of the sweep (its link and both
// flows); it failed if any of its parts did.
func (rep Report) failures() (failed []string, total int) {
	for _, r := range rep.Results {
		total++
		bad := r.Error != "" || r.Ping != nil && r.Ping.Error != "" || r.Bare != nil && r.Bare.Error != "" || r.TimeVarying != nil && r.TimeVarying.Error != ""
		for _, b := range r.Bulk {
			bad = bad || b.Error != ""
		}
		if bad {
			failed = append(failed, "profile "+r.Profile)
		}
	}
	for _, s := range rep.Sweep {
		total++
		if s.Error != "" || s.Bulk.Error != "" || s.Cubic.Error != "" {
			failed = append(failed, fmt.Sprintf("sweep %g Mbit/s", s.RateMbit))
		}
	}
	for _, f := range rep.Iperf {
		total++
		if f.Error != "" {
			failed = append(failed, "iperf3 "+f.Label)
		}
	}
	for _, q := range rep.Qdisc {
		total++
		if q.Error != "" {
			failed = append(failed, "qdisc "+q.Discipline)
		}
	}
	return failed, total
}

// failureLine is "N of M measurements failed (which)".
func failureLine(failed []string, total int) string {
	return fmt.Sprintf("%d of %d measurements failed (%s)", len(failed), total, strings.Join(failed, ", "))
}

// varies reports whether r's profile has jitter, a trace or a schedule:
// a link whose delay or rate is not fixed.
func (r Result) varies() bool {
	p, err := shapedlink.ParseProfile(r.Profile)
	if err != nil {
		return false
	}
	for _, d := range []shapedlink.Dir{shapedlink.Down, shapedlink.Up} {
		if pd := p.Direction(d); pd.Jitter > 0 || pd.Trace != "" || pd.Schedule != "" {
			return true
		}
	}
	return false
}

func (r Result) lossy() bool {
	p, err := shapedlink.ParseProfile(r.Profile)
	return err == nil && p.HasLoss()
}

// unusualBuffers is true when the flow did not get the buffers it asked
// for (unprivileged, the 32 MiB ones are capped by the host).
func (b Bulk) unusualBuffers() bool { return b.Buffers != "32MiB" && b.Buffers != "default" }

func mark(ok bool) string {
	if ok {
		return "ok"
	}
	return "MISS"
}

func ms(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) }

func printTable(w io.Writer, rep Report) {
	fmt.Fprintf(w, "calibrate %s on %s, load %s\n", rep.Started.Format(time.RFC3339), rep.Host, rep.Load)
	for _, r := range rep.Results {
		for _, a := range r.Applied {
			fmt.Fprintf(w, "  %s: %s\n", r.Profile, a)
		}
		if r.Priority != "" {
			fmt.Fprintf(w, "  %s: emulator priority %s\n", r.Profile, r.Priority)
		}
	}
	var tw *tabwriter.Writer
	if len(rep.Results) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "idle round trip\tbackend\texpected ms\tp50 err ms\t\tp99 err ms\t\tbare p50/p99\texcess p50/p99\tshaper late p50/p99\tudp echo p50/p99 err\tloopback p50/p99\t")
		for _, r := range rep.Results {
			if r.Error != "" && r.Answered == 0 && (r.Ping == nil || r.Ping.Answered == 0) {
				fmt.Fprintf(tw, "%s\t%s\terror: %s\t\n", r.Profile, r.Backend, r.Error)
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t", r.Profile, r.Backend)
			if pg := r.Ping; pg != nil && pg.Answered > 0 {
				m50, m99 := mark(pg.P50ErrMs <= 0.1 && pg.P50ErrMs >= -0.1), mark(pg.P99ErrMs <= 0.5 && pg.P99ErrMs >= -0.5)
				if r.varies() {
					// The targets are for a fixed delay and rate.
					m50, m99 = "n/a", "n/a"
				}
				fmt.Fprintf(tw, "%s\t%+.3f\t%s\t%+.3f\t%s\t", ms(pg.ExpectedMs), pg.P50ErrMs, m50, pg.P99ErrMs, m99)
			} else {
				fmt.Fprintf(tw, "-\t-\t\t-\t\t")
			}
			if b, pg := r.Bare, r.Ping; b != nil && b.Answered > 0 {
				fmt.Fprintf(tw, "%.3f/%.3f\t", b.P50ErrMs, b.P99ErrMs)
				if pg != nil && pg.Answered > 0 {
					fmt.Fprintf(tw, "%+.3f/%+.3f\t", pg.P50ErrMs-b.P50ErrMs, pg.P99ErrMs-b.P99ErrMs)
				} else {
					fmt.Fprintf(tw, "-\t")
				}
			} else {
				fmt.Fprintf(tw, "-\t-\t")
			}
			if r.ShaperLateP99Ms > 0 || r.ShaperLateP50Ms > 0 {
				fmt.Fprintf(tw, "%.3f/%.3f\t", r.ShaperLateP50Ms, r.ShaperLateP99Ms)
			} else {
				fmt.Fprintf(tw, "-\t")
			}
			if r.Answered > 0 {
				fmt.Fprintf(tw, "%+.3f/%+.3f\t", r.RTTP50ErrMs, r.RTTP99ErrMs)
			} else {
				fmt.Fprintf(tw, "-\t")
			}
			fmt.Fprintf(tw, "%.3f/%.3f\t\n", r.BaselineP50Ms, r.BaselineP99Ms)
		}
		tw.Flush()
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "rate and loss\tbbr goodput\twire\t\tcubic goodput\twire\t\tloss % [95% CI]\t\tburst/configured\tcpu/pkt\t")
		for _, r := range rep.Results {
			if r.TimeVarying != nil {
				fmt.Fprintf(tw, "%s\tskipped: the link varies (see below)\t\n", r.Profile)
				continue
			}
			if r.Error != "" && len(r.Bulk) == 0 {
				fmt.Fprintf(tw, "%s\terror: %s\t\n", r.Profile, r.Error)
				continue
			}
			fmt.Fprintf(tw, "%s\t", r.Profile)
			for _, b := range r.Bulk {
				if b.Error != "" {
					fmt.Fprintf(tw, "error\t\t\t")
					continue
				}
				verdict := mark(b.WirePct >= 95)
				if r.lossy() {
					verdict = "n/a" // TCP's response to random loss, not the link's capacity
				}
				fmt.Fprintf(tw, "%.1f%%\t%.1f%%\t%s\t", b.GoodputPct, b.WirePct, verdict)
			}
			fmt.Fprintf(tw, "%.2f [%.2f,%.2f]\t%s\t", r.LossPct, r.LossLoPct, r.LossHiPct, mark(r.LossInside))
			if r.LossMeanBurst > 0 {
				fmt.Fprintf(tw, "%.2f/%.2f\t", r.LossMeanBurst, r.LossBurstWant)
			} else {
				fmt.Fprintf(tw, "-\t")
			}
			if r.CPUPerPacketNs > 0 {
				fmt.Fprintf(tw, "%.2fus\t", r.CPUPerPacketNs/1000)
			} else {
				fmt.Fprintf(tw, "-\t")
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
	for _, r := range rep.Results {
		if r.Error != "" {
			fmt.Fprintf(w, "%s: %s\n", r.Profile, r.Error)
		}
		if r.DupWantPct > 0 {
			fmt.Fprintf(w, "%s: duplicated %.2f%% [%.2f,%.2f] of the loss run's datagrams, configured %g%%: %s\n", r.Profile, r.DupPct, r.DupLoPct, r.DupHiPct, r.DupWantPct, mark(r.DupWantPct >= r.DupLoPct && r.DupWantPct <= r.DupHiPct))
		}
		if tv := r.TimeVarying; tv != nil {
			if tv.Error != "" {
				fmt.Fprintf(w, "%s: trace and schedule: %s\n", r.Profile, tv.Error)
			}
			if tv.TraceWindows > 0 {
				fmt.Fprintf(w, "%s: trace: %.2f%% of what its opportunities carry delivered over %d s, worst second off by %.1f frames\n", r.Profile, tv.TraceDeliveredPct, tv.TraceWindows, tv.TraceMaxErrFrames)
			}
			if tv.Blackouts > 0 {
				fmt.Fprintf(w, "%s: %d blackouts, edges (first lost, first back) against the schedule:", r.Profile, tv.Blackouts)
				for _, e := range tv.EdgeErrMs {
					fmt.Fprintf(w, " %+.1f", e)
				}
				fmt.Fprintln(w, " ms")
			}
			switch {
			case tv.MaxAckLagMs > 0:
				fmt.Fprintf(w, "%s: %d scheduled changes applied, netem acknowledging each within %.1f ms of its time\n", r.Profile, tv.Changes, tv.MaxAckLagMs)
			case tv.Changes > 0:
				fmt.Fprintf(w, "%s: %d scheduled changes applied, the emulator getting to each within %.2f ms of its time (it applies them at their time to the frames' arrival stamps)\n", r.Profile, tv.Changes, tv.ShaperMaxLagMs)
			}
		}
		if j := r.Jitter; j != nil && j.Probes > 0 {
			fmt.Fprintf(w, "%s: jitter of %d probes %.0f ms apart, KS distance %.3f (5%% critical %.3f): %s; quantiles", r.Profile, j.Probes, j.GapMs, j.KS, j.KSCrit, mark(j.Fits))
			for i, lv := range j.Levels {
				fmt.Fprintf(w, " p%g %+.2f/%+.2f", 100*lv, j.Meas[i], j.Want[i])
			}
			fmt.Fprintln(w, " ms (measured/configured)")
		}
		if r.ReorderWantPct > 0 {
			fmt.Fprintf(w, "%s: sent early %.2f%% [%.2f,%.2f], configured %.3g%%: %s\n", r.Profile, r.ReorderPct, r.ReorderLoPct, r.ReorderHiPct, r.ReorderWantPct, mark(r.ReorderWantPct >= r.ReorderLoPct && r.ReorderWantPct <= r.ReorderHiPct))
		}
		for _, pr := range []struct {
			what string
			p    *Probe
		}{{"ping", r.Ping}, {"bare ping", r.Bare}} {
			if pr.p != nil && pr.p.Error != "" {
				fmt.Fprintf(w, "%s %s: %s\n", r.Profile, pr.what, pr.p.Error)
			}
		}
		for _, b := range r.Bulk {
			if b.Error != "" {
				fmt.Fprintf(w, "%s %s: %s\n", r.Profile, b.CC, b.Error)
			} else if b.unusualBuffers() {
				fmt.Fprintf(w, "%s %s: buffers %s\n", r.Profile, b.CC, b.Buffers)
			}
		}
	}
	for _, s := range rep.Sweep {
		for _, b := range []Bulk{s.Bulk, s.Cubic} {
			if b.Error != "" {
				fmt.Fprintf(w, "sweep %g Mbit/s %s: %s\n", s.RateMbit, b.CC, b.Error)
			} else if b.unusualBuffers() {
				fmt.Fprintf(w, "sweep %g Mbit/s %s: buffers %s\n", s.RateMbit, b.CC, b.Buffers)
			}
		}
	}
	if len(rep.Sweep) > 0 {
		fmt.Fprintln(w)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "sweep at 5 ms RTT\tbbr Mbit/s\twire\t\tcubic Mbit/s\twire\t\tcpu/pkt\t")
		for _, s := range rep.Sweep {
			if s.Error != "" {
				fmt.Fprintf(tw, "%g Mbit/s\terror: %s\t\n", s.RateMbit, s.Error)
				continue
			}
			fmt.Fprintf(tw, "%g Mbit/s\t", s.RateMbit)
			for _, b := range []Bulk{s.Bulk, s.Cubic} {
				if b.Error != "" {
					fmt.Fprintf(tw, "error\t\t\t")
					continue
				}
				fmt.Fprintf(tw, "%.1f\t%.1f%%\t%s\t", b.GoodputMbit, b.WirePct, mark(b.WirePct >= 95))
			}
			fmt.Fprintf(tw, "%.2fus\t\n", s.CPUNs/1000)
		}
		tw.Flush()
		fmt.Fprintf(w, "highest rate with wire utilisation within 5%% of configured: %g Mbit/s\n", rep.HighestOKMbit)
	}
	printIperf(w, rep.Iperf)
	printQdisc(w, rep.Qdisc)
}

// printQdisc is the queue discipline table: the flow's goodput, the
// standing queue it keeps, and what a sparse flow beside it waits.
func printQdisc(w io.Writer, qs []Qdisc) {
	if len(qs) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "qdisc\tprofile\tflow Mbit/s\tstanding p50\tp95\tsparse +p50\t+p95\techoes\tdrops (limit/queue/codel)\tmarks\t")
	for _, q := range qs {
		if q.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\terror\t\n", q.Discipline, q.Profile)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f\t%s\t%s\t%s\t%s\t%d/%d\t%d/%d/%d\t%d\t\n", q.Discipline, q.Profile, q.FlowMbit,
			ms(q.StandingP50Ms), ms(q.StandingP95Ms), ms(q.SparseP50Ms), ms(q.SparseP95Ms), q.Echoes, q.EchoesSent,
			q.LimitDrops, q.QueueDrops, q.CoDelDrops, q.ECNMarks)
	}
	tw.Flush()
	for _, q := range qs {
		if q.Error != "" {
			fmt.Fprintf(w, "qdisc %s: %s\n", q.Discipline, q.Error)
		}
	}
	fmt.Fprintln(w, "standing: the wait for the rate at the down queue, from the shaper's held bytes every 10 ms; sparse: echoes 10 ms apart beside the flow, round trip beyond the configured one; ms")
}

// printIperf is the iperf3 table: each flow's goodput, its wire share of
// the rate against the target, and the unlimited link against the bare
// pair measured in the same run.
func printIperf(w io.Writer, fs []Iperf) {
	if len(fs) == 0 {
		return
	}
	var bare float64
	for _, f := range fs {
		if f.Backend == "none" && f.Error == "" {
			bare = f.Mbit
		}
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	unjudged := false
	fmt.Fprintln(tw, "iperf3 cubic\tprofile\tMbit/s\tretr\tgoodput\twire\ttarget\t\tcpu/frame\t")
	for _, f := range fs {
		if f.Error != "" {
			fmt.Fprintf(tw, "%s\t%s\terror\t\n", f.Label, f.Profile)
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f\t%d\t", f.Label, f.Profile, f.Mbit, f.Retransmits)
		switch {
		case f.RateMbit > 0:
			t := iperfTarget(f.RateMbit)
			verdict := mark(f.WirePct >= t)
			if bare > 0 && bare < f.RateMbit*t/100 {
				// The machine cannot carry this rate even without the
				// emulator; the target says nothing here.
				verdict, unjudged = "n/a", true
			}
			fmt.Fprintf(tw, "%.1f%%\t%.1f%%\t>= %.0f%%\t%s\t", f.GoodputPct, f.WirePct, t, verdict)
		case f.Backend != "none" && bare > 0:
			fmt.Fprintf(tw, "-\t%.1f%% of bare\t>= 90%%\t%s\t", 100*f.Mbit/bare, mark(f.Mbit >= 0.9*bare))
		default:
			fmt.Fprintf(tw, "-\t-\t\t\t")
		}
		if f.CPUNsPerFrame > 0 {
			fmt.Fprintf(tw, "%.2fus\t\n", f.CPUNsPerFrame/1000)
		} else {
			fmt.Fprintf(tw, "-\t\n")
		}
	}
	tw.Flush()
	for _, f := range fs {
		if f.Error != "" {
			fmt.Fprintf(w, "iperf3 %s: %s\n", f.Label, f.Error)
		}
	}
	if unjudged {
		fmt.Fprintf(w, "n/a: the target is above the %.1f Mbit/s the same flow got over the bare veth pair in this run, so it cannot be judged on this machine\n", bare)
	}
}
