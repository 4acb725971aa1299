package report

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/shakenfist/quicbench/gsocheck"
	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/neighbours"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/stats"
	"github.com/shakenfist/quicbench/transport"
)

// The names of the arms the summary reads others against: measure's
// built-in arms, as results records them. ArmTCP is the baseline every
// other arm of a cell is read against; the rest make the readings that
// each isolate one difference (see Comparison). Which arms there are, and
// their order in every table, come from measure's registry (measure.Arms).
const (
	ArmTCP            = string(transport.ArmTCP)
	ArmQUIC           = string(transport.ArmQUIC)
	ArmQUICPerChannel = string(transport.ArmQUICPerChannel)
	ArmQUICPriority   = string(transport.ArmQUICPriority)
	ArmTCPMux         = "tcp-mux"
)

// Options tune how runs are summarised. The zero value uses the warm-up each
// run recorded.
type Options struct {
	// Source names where the runs came from (a results directory); it is
	// printed in the report's heading and recorded in the JSON.
	Source string
	// OverrideWarmup makes Warmup replace the warm-up recorded in every run.
	// Without it, every measured run of an arm must record the same warm-up,
	// or Build says so and asks for an override.
	OverrideWarmup bool
	Warmup         time.Duration
}

// Report is every figure the summary prints, computed once from the runs.
// Times are milliseconds and throughputs Mbit/s; the field names say so.
type Report struct {
	Source string `json:"source,omitempty"`
	// Runs counts run.json records read, measured or failed.
	Runs int `json:"runs"`
	// WarmupMs is the warm-up discarded from each run when every arm used
	// the same one; WarmupVaries is set when they differ (each arm's own
	// is in ArmReport.WarmupMs). WarmupOverridden says it came from
	// Options rather than from the runs.
	WarmupMs         float64 `json:"warmup_ms"`
	WarmupVaries     bool    `json:"warmup_varies,omitempty"`
	WarmupOverridden bool    `json:"warmup_overridden"`

	// Cells are ordered headline first (not Sensitivity), then by
	// congestion control (reno first), profile (RTT ascending, rate
	// descending) and loss.
	Cells []CellReport `json:"cells"`
	// ConnectTime is per profile and arm, pooled over loss levels and
	// congestion-control settings (the handshake does not depend on the
	// controller).
	ConnectTime []ConnectRow `json:"connect_time"`
	// Warnings is never nil: an empty list means nothing to warn about.
	Warnings []Warning `json:"warnings"`
	// Neighbours is what the session cost the cross flows beside it; nil
	// when no run carried any.
	Neighbours *neighbours.Table `json:"neighbours,omitempty"`

	// Host is the host state the first run recorded, verbatim; Link the
	// link as that run applied it, and LinkFrom which run that was.
	Host     json.RawMessage `json:"host,omitempty"`
	Link     results.Link    `json:"link"`
	LinkFrom string          `json:"link_from"`
}

// CellReport is one cell of the matrix: every arm measured in it and the
// readings between them.
type CellReport struct {
	Cell results.Cell `json:"cell"`
	// Dir is Cell.Dir(), the cell's directory and the stem of its plots.
	Dir         string       `json:"dir"`
	Arms        []ArmReport  `json:"arms"`
	Comparisons []Comparison `json:"comparisons"`
	// Sessions is the per-session view, for cells whose runs carried
	// several sessions (Cell.Sessions set); Arms and Comparisons then
	// describe session 0 only.
	Sessions *SessionsReport `json:"sessions,omitempty"`
}

// Label is a one-line name for the cell, such as
// "80 ms / 10 Mbit, 1% loss, reno".
func (c CellReport) Label() string {
	s := fmt.Sprintf("%s, %s loss, %s", CellTitle(c.Cell), pct(c.Cell.LossPct), c.Cell.CC)
	if c.Cell.Sensitivity {
		s += " (sensitivity)"
	}
	return s
}

// CellTitle is the cell's profile title with what else sets it apart from
// a headline cell: "80 ms / 10 Mbit, 4 sessions", "80 ms / 10 Mbit,
// display capped at 50% (5 Mbit/s)". A headline cell's is Cell.Title().
func CellTitle(c results.Cell) string {
	s := c.Title()
	if c.Sessions != 0 {
		s += ", " + plural(c.Sessions, "session")
	}
	if c.BulkCapFraction != 0 {
		s += fmt.Sprintf(", display capped at %s%% (%s Mbit/s)",
			strconv.FormatFloat(100*c.BulkCapFraction, 'f', -1, 64),
			strconv.FormatFloat(float64(c.BulkRateCapBps)/1e6, 'f', -1, 64))
	}
	return s
}

// Arm returns the named arm, or nil.
func (c *CellReport) Arm(name string) *ArmReport {
	for i := range c.Arms {
		if c.Arms[i].Arm == name {
			return &c.Arms[i]
		}
	}
	return nil
}

// ArmReport summarises one arm of one cell over its repeats.
type ArmReport struct {
	Arm string `json:"arm"`
	// Runs counts records; Measured those that took part in the
	// percentiles; Unmeasured failed runs or runs with no sample after the
	// warm-up, with reasons in Failures.
	Runs       int      `json:"runs"`
	Measured   int      `json:"measured"`
	Unmeasured int      `json:"unmeasured"`
	Failures   []string `json:"failures,omitempty"`
	// Error is set when no repeat could be measured; the figures below are
	// then zero.
	Error    string  `json:"error,omitempty"`
	WarmupMs float64 `json:"warmup_ms"`

	// P50Ms, P95Ms and P99Ms are medians over repeats of each repeat's own
	// percentile (stats.SummariseCell).
	P50Ms float64 `json:"p50_ms"`
	P95Ms float64 `json:"p95_ms"`
	P99Ms float64 `json:"p99_ms"`
	// SpreadMs is P95MaxMs - P95MinMs; RepeatP95Ms each measured repeat's
	// p95, in repeat order.
	SpreadMs    float64   `json:"p95_spread_ms"`
	P95MinMs    float64   `json:"p95_min_ms"`
	P95MaxMs    float64   `json:"p95_max_ms"`
	RepeatP95Ms []float64 `json:"repeat_p95_ms"`
	// P95Interval is the order-statistic interval for the median p95.
	P95Interval Interval `json:"p95_interval"`
	// SamplesPerRun is the median count of post-warm-up samples.
	SamplesPerRun float64 `json:"samples_per_run"`
	// Timeouts is the total over all runs; TimeoutsPerRepeat per run in
	// repeat order, unmeasured runs included.
	Timeouts          int   `json:"timeouts"`
	TimeoutsPerRepeat []int `json:"timeouts_per_repeat"`
	// ThroughputMbit is the saturating channel's goodput over measured
	// repeats; RepeatThroughputMbit each repeat's.
	ThroughputMbit       stats.Summary `json:"throughput_mbit"`
	RepeatThroughputMbit []float64     `json:"repeat_throughput_mbit"`
	// ConnectMs is the connect time over runs that recorded one.
	ConnectMs *stats.Summary `json:"connect_ms,omitempty"`
	// GSO is the offload check over the arm's runs (QUIC arms only; empty
	// when no run recorded evidence).
	GSO []GSOSummary `json:"gso,omitempty"`
	// CPU is the processes' CPU time per MB and peak memory, where the runs
	// recorded them.
	CPU *CPUSummary `json:"cpu,omitempty"`
	// CongestionControl lists the distinct controllers the runs recorded as
	// in force.
	CongestionControl []string `json:"congestion_control,omitempty"`
	// TCPController lists the distinct settings of this project's own
	// controller (quicreno) the runs recorded (results.Run.TCPController).
	TCPController []string `json:"tcp_controller,omitempty"`
	// Recovery is how the interactive channel came back after the link's
	// scheduled events (a blackout, a rate step down), by kind; empty for
	// a link without a schedule.
	Recovery []RecoverySummary `json:"recovery,omitempty"`

	stats    stats.Cell
	pooled   []float64 // post-warm-up round trips in ms, pooled over measured repeats
	timeline *Timeline // the first run with scheduled changes, for its plot
}

// Interval is stats.Interval in milliseconds.
type Interval struct {
	LoMs  float64 `json:"lo_ms"`
	HiMs  float64 `json:"hi_ms"`
	Level float64 `json:"level"`
	// Enough is false when there are too few repeats for the requested
	// confidence; Lo and Hi are then the range and Level its coverage.
	Enough bool   `json:"enough"`
	Note   string `json:"note,omitempty"`
}

// Comparison reads arm B against arm A in one cell (stats.Compare). A cell
// reads every arm against tcp; quic-priority against quic (stream priority
// alone), and in a cell of several sessions quic-per-channel against quic
// (a connection per channel alone); and quic against tcp-mux (QUIC's
// independent streams against one TCP connection's single ordered stream,
// each with one congestion window).
type Comparison struct {
	A string `json:"a"`
	B string `json:"b"`
	// DeltaMs is B's median p95 minus A's: positive means B is slower.
	DeltaMs     float64 `json:"delta_ms"`
	ThresholdMs float64 `json:"threshold_ms"`
	// Verdict is stats' verdict ("better", "worse", "unresolved") for B;
	// Reading says it in words ("QUIC worse").
	Verdict stats.Verdict `json:"verdict"`
	Reading string        `json:"reading"`
	Reason  string        `json:"reason,omitempty"`
	// U is the Mann-Whitney test between the arms' repeat p95s.
	U stats.UTest `json:"u_test"`
	// Error says why the arms could not be compared (an arm with no
	// measured repeat); the figures are then zero.
	Error string `json:"error,omitempty"`
}

// GSOSummary is the offload check over one arm's runs, from one source of
// evidence.
type GSOSummary struct {
	// Source is "queue" (bytes per queue slot) or "counters" (egress-hook
	// counters).
	Source string `json:"source"`
	// Verdict is "off" only when every run with this evidence said off;
	// otherwise the worst seen ("on" before "inconclusive").
	Verdict gsocheck.Verdict `json:"verdict"`
	// Runs is how many runs carried this evidence; Off, On and
	// Inconclusive count their verdicts.
	Runs         int `json:"runs"`
	Off          int `json:"off"`
	On           int `json:"on"`
	Inconclusive int `json:"inconclusive"`
	// PooledMeanMin and PooledMeanMax are the range of the runs' pooled
	// means (bytes per slot); Max the largest per-sample bytes per slot
	// (queue evidence only); Expected the size one pinned datagram takes.
	PooledMeanMin float64 `json:"pooled_mean_min"`
	PooledMeanMax float64 `json:"pooled_mean_max"`
	Max           float64 `json:"max"`
	Expected      int     `json:"expected"`
	// Used and Total sum the runs' samples (queue) or packets (counters)
	// used, out of those taken; Oversize sums oversize packets (counters).
	Used     int    `json:"used"`
	Total    int    `json:"total"`
	Oversize uint64 `json:"oversize,omitempty"`
	// Reasons are the distinct reasons given for verdicts other than off.
	Reasons []string `json:"reasons,omitempty"`
}

// ConnectRow is connect time for one profile and arm.
type ConnectRow struct {
	Profile  string        `json:"profile"`
	Title    string        `json:"title"`
	RTTms    float64       `json:"rtt_ms"`
	RateMbit float64       `json:"rate_mbit"`
	Arm      string        `json:"arm"`
	Ms       stats.Summary `json:"ms"`
}

// Warning kinds.
const (
	kindTimeout    = "timeout"
	kindUnmeasured = "unmeasured"
	kindGSO        = "gso"
	kindNoCompare  = "no-comparison"
	kindCC         = "congestion-control"
	kindBackend    = "backend"
	kindShaper     = "shaper"
)

// Warning is something a reader must know before trusting a cell.
type Warning struct {
	Cell   string `json:"cell"` // CellReport.Label(), or "" for the whole run
	Dir    string `json:"dir,omitempty"`
	Arm    string `json:"arm,omitempty"`
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

// runsQUIC reports whether arm's runs carry QUIC: by the arm's registry
// (measure.Arm.QUIC), or, for an arm this program has not registered, by
// their records (results.Run.QUIC).
func runsQUIC(arm string, rs []results.Run) bool {
	if measure.Arm(arm).QUIC() {
		return true
	}
	for _, r := range rs {
		if r.Arm == arm && r.QUIC {
			return true
		}
	}
	return false
}

// QUIC reports whether the arm is read as QUIC: by its name, or because
// its runs had offload evidence, which only a QUIC arm's get (runsQUIC).
func (a *ArmReport) QUIC() bool { return measure.Arm(a.Arm).QUIC() || a.GSO != nil }

// Pooled is the arm's post-warm-up round trips in ms, pooled over its
// measured repeats.
func (a *ArmReport) Pooled() []float64 { return a.pooled }

// Timeline is the arm's first run with scheduled changes, or nil.
func (a *ArmReport) Timeline() *Timeline { return a.timeline }

// ArmLabel is how an arm is named in prose: "QUIC" for the plain quic arm,
// the arm's own name otherwise.
func ArmLabel(arm string) string {
	if arm == ArmQUIC {
		return "QUIC"
	}
	if arm == ArmTCP {
		return "TCP"
	}
	return arm
}

// pct is a loss level as the tables write it: "1%".
func pct(loss float64) string { return strconv.FormatFloat(loss, 'f', -1, 64) + "%" }

// plural is n of noun, in the plural unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
