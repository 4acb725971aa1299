package calibrate

import (
	"fmt"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/internal/buildinfo"
	"github.com/shakenfist/quicbench/shapedlink"
)

// Result is one profile's calibration on a fresh link, in the order
// measured: the bare pair's and the link's idle round trip (Bare, Ping),
// the UDP echo, then for a link that stays put the two bulk flows (Bulk),
// the loss run and, with jitter down, the jitter fit; for a link whose
// down direction has a trace or a schedule, TimeVarying instead of the
// flows and the loss run. Backend, Applied and Priority are the link as
// built: shapedlink's backend and applied lines, and the emulator
// threads' scheduling policy and nice.
type Result struct {
	Profile  string   `json:"profile"`
	Backend  string   `json:"backend"`
	Applied  []string `json:"applied"`
	Priority string   `json:"emulator_priority,omitempty"`

	// Ping is the link's own idle round trip (Config.Echoes ICMP echoes
	// from the client namespace, Config.Interval apart, answered by the
	// server's kernel, each timed from just before it is handed to the
	// kernel to the kernel's receive timestamp of its reply, so no
	// process's wake-up is in it), the figure the targets apply to; Bare
	// is the same probe over an unshaped veth pair with the same offloads
	// (shapedlink.BackendNone), measured just before, which is what the
	// machine adds to any round trip. Errors are measured minus expected
	// (the RTT plus the 98-byte frame's serialisation each way).
	Ping *Probe `json:"ping,omitempty"`
	Bare *Probe `json:"bare,omitempty"`
	// ShaperLateP50Ms and ShaperLateP99Ms are the emulator's own record of
	// how late it wrote the probe's frames (the worse direction).
	ShaperLateP50Ms float64 `json:"shaper_late_p50_ms,omitempty"`
	ShaperLateP99Ms float64 `json:"shaper_late_p99_ms,omitempty"`
	ShaperLateMaxMs float64 `json:"shaper_late_max_ms,omitempty"`
	// ShaperGCCycles and ShaperGCPauseMaxMs are the emulator's garbage
	// collections since it started forwarding and the longest pause of
	// any, when it reports them (absent for netem and older reports).
	ShaperGCCycles     *uint64 `json:"shaper_gc_cycles,omitempty"`
	ShaperGCPauseMaxMs float64 `json:"shaper_gc_pause_max_ms,omitempty"`
	// Noise is "on" when Bare, Ping and the shaper's figures above were
	// measured with Config's background load (NoiseLoad) running; Noisy
	// is the same idle round trip measured again with it, on a fresh bare
	// pair and link, when Config.Noise is NoiseBoth.
	Noise string `json:"noise,omitempty"`
	Noisy *Idle  `json:"noisy,omitempty"`
	// LateTrace is the kernel trace caught while Ping was probed, with
	// Config.TraceLate.
	LateTrace *LateTrace `json:"late_trace,omitempty"`

	// The UDP echo is what an application sees: the same number of 64-byte
	// UDP echoes between two sockets of this process, 10 ms apart,
	// including both ends' wake-ups.
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

	// Bulk is one BBR flow with 32 MiB buffers, then one Cubic flow with
	// the kernel's, server to client, each for Config.Bulk.
	Bulk []Bulk `json:"bulk"`

	// The loss run: LossSent datagrams server to client, paced at half
	// the link's byte rate and half the packet rate its limit allows (the
	// limit counts the delay line), so the limit never drops; the share
	// lost with its 95% Wilson interval, and whether the configured mean
	// loss (scaled by 1-dup with dup down) lies inside it (LossInside).
	LossSent      int     `json:"loss_sent"`
	LossDelivered int     `json:"loss_delivered"`
	LossPct       float64 `json:"loss_measured_pct"`
	LossLoPct     float64 `json:"loss_ci95_lo_pct"`
	LossHiPct     float64 `json:"loss_ci95_hi_pct"`
	LossInside    bool    `json:"loss_configured_inside_ci"`
	// LossMeanBurst is the mean length of runs of lost datagrams, and
	// LossBurstWant what the configured loss model gives (1/(1-p) for
	// independent loss, 100/r for Gilbert-Elliott, for the 4-state model
	// the mean of its isolated losses and its stays in state 3, 0 when it
	// loses nothing in the long run); the interval above is
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
	// With corruption in the down direction: the share of the loss
	// run's datagrams the receiver's IP and UDP checks dropped (their
	// error counters in the client's namespace), with its 95% interval,
	// beside the share expected (the configured share, times the part of
	// a frame those checks cover: all but its 14-byte Ethernet header),
	// and how many datagrams arrived changed all the same (none should).
	CorruptCaughtPct   float64 `json:"corrupt_caught_pct,omitempty"`
	CorruptCaughtLoPct float64 `json:"corrupt_caught_ci95_lo_pct,omitempty"`
	CorruptCaughtHiPct float64 `json:"corrupt_caught_ci95_hi_pct,omitempty"`
	CorruptWantPct     float64 `json:"corrupt_caught_expected_pct,omitempty"`
	CorruptArrived     int     `json:"corrupt_arrived_changed,omitempty"`

	// Jitter is the down direction's delay variation against its
	// configured distribution, for a profile with jitter.
	Jitter *JitterFit `json:"jitter,omitempty"`
	// TimeVarying is the trace's and the schedule's fidelity, for a
	// profile whose down direction has one (the bulk flows and the loss
	// run, which assume a fixed link, are then skipped).
	TimeVarying *TimeVarying `json:"time_varying,omitempty"`

	// CPUPerPacketNs is the emulator's CPU time during the two bulk flows
	// (summed over its threads) over the frames that entered the link
	// (both ends' egress counters; a super-packet is one frame there).
	CPUPerPacketNs float64 `json:"emulator_cpu_ns_per_packet,omitempty"`
	// Error is what stopped a part of the calibration.
	Error string `json:"error,omitempty"`
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

// Idle is one idle round trip measurement of a profile on its own bare
// pair and link: the fields of the same names in Result.
type Idle struct {
	Bare               *Probe     `json:"bare,omitempty"`
	Ping               *Probe     `json:"ping,omitempty"`
	ShaperLateP50Ms    float64    `json:"shaper_late_p50_ms,omitempty"`
	ShaperLateP99Ms    float64    `json:"shaper_late_p99_ms,omitempty"`
	ShaperLateMaxMs    float64    `json:"shaper_late_max_ms,omitempty"`
	ShaperGCCycles     *uint64    `json:"shaper_gc_cycles,omitempty"`
	ShaperGCPauseMaxMs float64    `json:"shaper_gc_pause_max_ms,omitempty"`
	LateTrace          *LateTrace `json:"late_trace,omitempty"`
	Error              string     `json:"error,omitempty"`
}

// LateTrace is a stall caught with Config.TraceLate: whether the
// emulator sent a frame late enough to stop the trace (Caught), the file
// the trace was saved as, and a reading of it (the late thread, when it
// was woken, how long it was runnable before it ran, what ran on its CPU
// meanwhile).
type LateTrace struct {
	Caught  bool   `json:"caught"`
	File    string `json:"file,omitempty"`
	Reading string `json:"reading,omitempty"`
	Error   string `json:"error,omitempty"`
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

// Bulk is one bulk TCP flow from server to client. Goodput is the
// receiving kernel's count of in-order bytes (tcpi_bytes_received) over
// the last two thirds of the flow, which can read above the rate when the
// window opens while a loss is being repaired; GoodputPct and WirePct are
// shares of the configured rate. Buffers is "32MiB", "default", or what
// the kernel granted where the 32 MiB could not be forced (in a user
// namespace). A wire share above what the window's edges and the
// emulator's lateness allow (at least 100.5%) is a measurement error
// and becomes Error.
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

// Sweep is one step of the highest-rate search: a BBR and a Cubic flow,
// both asking for 32 MiB buffers, over a fresh 5 ms link at RateMbit, and
// the emulator's CPU per frame across both (CPUNs). The highest rate at
// which either flow's wire share reaches 95% is Report.HighestOKMbit.
type Sweep struct {
	RateMbit float64 `json:"rate_mbit"`
	Bulk     Bulk    `json:"bulk"`
	Cubic    Bulk    `json:"cubic"`
	CPUNs    float64 `json:"emulator_cpu_ns_per_packet,omitempty"`
	Error    string  `json:"error,omitempty"`
}

// Iperf is one iperf3 flow (-C cubic, client to server, Config.Bulk
// rounded to seconds after 2 s omitted) across a link: in order, the bare
// veth pair with its offloads on (label "bare veth, offloads on") and
// wire-sized ("bare veth, wire-sized"), whatever Config.Link.Offload
// says, then in its mode an unlimited link (2:100000) and a 5 ms link of
// each rate. The wire share is the emulator's forwarded bytes inside
// iperf3's measured window.
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
	// the wire packets it forwarded (both directions; a super-packet
	// counts as its wire segments), and CPUSecPerGB the same CPU time in
	// seconds per 10^9 bytes it forwarded (both directions, each wire
	// segment's frame length).
	CPUNsPerFrame float64 `json:"emulator_cpu_ns_per_frame,omitempty"`
	CPUSecPerGB   float64 `json:"emulator_cpu_s_per_gb,omitempty"`
	// Offload is the link's offload mode, "wire" or "keep" (absent in
	// reports from before the mode was recorded: wire). SuperPacketsIn
	// and SuperPacketsOut are the emulator's count of offload
	// super-packets read and written over the flow (both directions): the
	// evidence that a link kept its offloads.
	Offload         string `json:"offload,omitempty"`
	SuperPacketsIn  uint64 `json:"super_packets_in,omitempty"`
	SuperPacketsOut uint64 `json:"super_packets_out,omitempty"`
	// Segments is the wire segments the emulator forwarded over the flow
	// and FramesOut the frames it wrote for them (a super-packet once),
	// both directions; Early counts the segments sent ahead of their due
	// time within the departure window, EarlyMaxMs the most (the larger
	// direction's).
	Segments   uint64  `json:"segments,omitempty"`
	FramesOut  uint64  `json:"frames_out,omitempty"`
	Early      uint64  `json:"early,omitempty"`
	EarlyMaxMs float64 `json:"early_max_ms,omitempty"`
	Error      string  `json:"error,omitempty"`
}

// Report is everything Run measured, as calibrate -json writes it
// (WriteJSON) and -render reads it back. Each list is one measurement
// series of Config, empty when not asked for.
type Report struct {
	// Started is when the run began (UTC), Host the machine's name and
	// Load its /proc/loadavg then.
	Started time.Time `json:"started"`
	Host    string    `json:"host"`
	Load    string    `json:"loadavg"`
	// Build is which code made the report (its commit, and where that
	// came from), so a figure can be traced to the code that measured it.
	Build buildinfo.Info `json:"build"`
	// Offload is Config.Link.Offload, the mode every link of the report
	// was built in: "wire" or "keep" (absent in reports from before it
	// was recorded, which measured wire-sized links).
	Offload string `json:"offload,omitempty"`
	// KeepAwake is Config.KeepAwake: every link ran with its CPUs kept
	// awake by SCHED_IDLE busy loops, the bare pairs without.
	KeepAwake bool `json:"keep_awake,omitempty"`
	// WakeProbe is the probe of the host's timer wake-ups that decided
	// keep-awake for every link (Config.KeepAwakeAuto), taken before the
	// first; nil when keep-awake was fixed.
	WakeProbe *shapedlink.WakeProbe `json:"wake_probe,omitempty"`
	// DepartureWindowUs is Config.DepartureWindow in microseconds: every
	// link batched its departures within it, the bare pairs had none.
	DepartureWindowUs int64    `json:"departure_window_us,omitempty"`
	Results           []Result `json:"results"` // Config.Profiles
	Sweep             []Sweep  `json:"sweep,omitempty"`
	// HighestOKMbit is the highest sweep rate at which a flow's wire
	// share reached 95% (0: none).
	HighestOKMbit float64 `json:"highest_rate_within_5pct_mbit"`
	Iperf         []Iperf `json:"iperf3,omitempty"`
	Qdisc         []Qdisc `json:"qdisc,omitempty"`
	// GSOLoss and QUICGSO are those measurements, when Config asked for
	// them.
	GSOLoss *GSOLoss `json:"gso_loss,omitempty"`
	QUICGSO *QUICGSO `json:"quic_gso,omitempty"`
}

// Qdisc is one queue discipline under one Cubic flow saturating the down
// direction, with a sparse flow of echoes beside it (Config.Qdiscs).
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

// Failures names the measurements in rep that failed, out of total. A
// measurement is one profile's calibration (its link, probes, bulk flows,
// loss run, time-varying figures and late trace), one rate of the sweep (its link and
// both flows), one iperf3 flow, one discipline, the UDP_SEGMENT flood or
// the quic-go transfer; it failed if any of its parts did.
func (rep Report) Failures() (failed []string, total int) {
	for _, r := range rep.Results {
		total++
		bad := r.Error != "" || r.Ping != nil && r.Ping.Error != "" || r.Bare != nil && r.Bare.Error != "" || r.TimeVarying != nil && r.TimeVarying.Error != "" ||
			r.LateTrace != nil && r.LateTrace.Error != ""
		if n := r.Noisy; n != nil {
			bad = bad || n.Error != "" || n.Ping != nil && n.Ping.Error != "" || n.Bare != nil && n.Bare.Error != "" || n.LateTrace != nil && n.LateTrace.Error != ""
		}
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
	if g := rep.GSOLoss; g != nil {
		total++
		if g.Error != "" {
			failed = append(failed, "gsoloss "+g.Profile)
		}
	}
	if q := rep.QUICGSO; q != nil {
		total++
		if q.Error != "" {
			failed = append(failed, "quicgso "+q.Profile)
		}
	}
	return failed, total
}

// FailureLine is "N of M measurements failed (which)", for Failures'
// results.
func FailureLine(failed []string, total int) string {
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
