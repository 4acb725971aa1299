package report

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/examples/internal/results"
	"github.com/shakenfist/quicbench/gsocheck"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/stats"
)

// Arm names, as results records them.
const (
	ArmTCP            = "tcp"
	ArmQUIC           = "quic"
	ArmQUICPerChannel = "quic-per-channel"
	ArmQUICPriority   = "quic-priority"
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

	stats  stats.Cell
	pooled []float64 // post-warm-up round trips in ms, pooled over measured repeats
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

// Comparison reads arm B against arm A in one cell (stats.Compare).
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
	// (queue evidence only); Expected the reference size.
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
	WarnTimeout    = "timeout"
	WarnUnmeasured = "unmeasured"
	WarnGSO        = "gso"
	WarnNoCompare  = "no-comparison"
	WarnCC         = "congestion-control"
	WarnBackend    = "backend"
	WarnShaper     = "shaper"
)

// Warning is something a reader must know before trusting a cell.
type Warning struct {
	Cell   string `json:"cell"` // CellReport.Label(), or "" for the whole run
	Dir    string `json:"dir,omitempty"`
	Arm    string `json:"arm,omitempty"`
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

// Build summarises runs (as results.Load returns them) into a Report.
// It fails on no runs, a negative override, or an arm whose runs recorded
// different warm-ups without an override.
func Build(runs []results.Run, opts Options) (*Report, error) {
	if len(runs) == 0 {
		return nil, errors.New("report: no runs to summarise; point it at a results directory that holds run.json files")
	}
	if opts.OverrideWarmup && opts.Warmup < 0 {
		return nil, fmt.Errorf("report: warm-up override %v is negative; give a duration of zero or more", opts.Warmup)
	}
	rep := &Report{
		Source:           opts.Source,
		Runs:             len(runs),
		WarmupOverridden: opts.OverrideWarmup,
		Warnings:         []Warning{},
		Host:             runs[0].Host,
		Link:             runs[0].Link,
		LinkFrom:         fmt.Sprintf("%s/%s/r%d", runs[0].Cell.Dir(), runs[0].Arm, runs[0].Repeat),
	}

	// Group by cell, then arm, keeping repeat order.
	type key struct{ dir, arm string }
	cells := map[string]*CellReport{}
	byArm := map[key][]results.Run{}
	for _, r := range runs {
		d := r.Cell.Dir()
		if _, ok := cells[d]; !ok {
			cells[d] = &CellReport{Cell: r.Cell, Dir: d}
		}
		k := key{d, r.Arm}
		byArm[k] = append(byArm[k], r)
	}
	for k, rs := range byArm {
		slices.SortStableFunc(rs, func(a, b results.Run) int { return cmp.Compare(a.Repeat, b.Repeat) })
		ar, err := buildArm(k.arm, rs, opts)
		if err != nil {
			return nil, fmt.Errorf("report: cell %s, arm %s: %w", k.dir, k.arm, err)
		}
		c := cells[k.dir]
		c.Arms = append(c.Arms, ar)
	}
	for _, c := range cells {
		slices.SortFunc(c.Arms, func(a, b ArmReport) int { return compareArms(a.Arm, b.Arm) })
		c.Comparisons = compareCell(c)
		if c.Cell.Sessions != 0 {
			arms := map[string][]results.Run{}
			for k, rs := range byArm {
				if k.dir == c.Dir {
					arms[k.arm] = rs
				}
			}
			sr, err := buildSessions(c.Cell, arms, opts)
			if err != nil {
				return nil, fmt.Errorf("report: cell %s: %w", c.Dir, err)
			}
			c.Sessions = sr
		}
		rep.Cells = append(rep.Cells, *c)
	}
	slices.SortFunc(rep.Cells, func(a, b CellReport) int { return compareCells(a.Cell, b.Cell) })

	// Warm-up: one figure when every arm agrees.
	first := true
	for _, c := range rep.Cells {
		for _, a := range c.Arms {
			if first {
				rep.WarmupMs, first = a.WarmupMs, false
			} else if a.WarmupMs != rep.WarmupMs {
				rep.WarmupVaries = true
			}
		}
	}

	rep.ConnectTime = connectRows(runs)
	rep.Warnings = append(rep.Warnings, warnings(rep, runs)...)
	return rep, nil
}

func buildArm(arm string, rs []results.Run, opts Options) (ArmReport, error) {
	ar := ArmReport{Arm: arm, Runs: len(rs), CPU: cpuSummary(rs)}
	warmup, err := armWarmup(rs, opts)
	if err != nil {
		return ar, err
	}
	ar.WarmupMs = ms(warmup)

	repeats := make([]stats.Repeat, len(rs))
	for i, r := range rs {
		repeats[i] = r.StatsRepeat()
	}
	sc, err := stats.SummariseCell(repeats, warmup)
	ar.stats = sc
	ar.Measured, ar.Unmeasured = sc.Measured, sc.Unmeasured
	ar.Timeouts, ar.TimeoutsPerRepeat = sc.Timeouts, sc.TimeoutsPerRepeat
	// stats numbers repeats by position; say which recorded repeat it was.
	for _, f := range sc.Failures {
		var pos int
		if _, e := fmt.Sscanf(f, "repeat %d:", &pos); e == nil && pos >= 1 && pos <= len(rs) {
			f = fmt.Sprintf("r%d%s", rs[pos-1].Repeat, strings.TrimPrefix(f, fmt.Sprintf("repeat %d", pos)))
		}
		ar.Failures = append(ar.Failures, f)
	}
	if err != nil {
		if !errors.Is(err, stats.ErrNoRepeats) {
			return ar, err
		}
		ar.Error = err.Error()
	} else {
		ar.P50Ms, ar.P95Ms, ar.P99Ms = ms(sc.P50), ms(sc.P95), ms(sc.P99)
		ar.P95MinMs, ar.P95MaxMs, ar.SpreadMs = ms(sc.P95Min), ms(sc.P95Max), ms(sc.Spread)
		for _, d := range sc.RepeatP95s() {
			ar.RepeatP95Ms = append(ar.RepeatP95Ms, ms(d))
		}
		iv := sc.P95Interval
		ar.P95Interval = Interval{LoMs: ms(iv.Lo), HiMs: ms(iv.Hi), Level: iv.Level, Enough: iv.Enough, Note: iv.Note}
		ar.SamplesPerRun = sc.SamplesPerRun
		ar.ThroughputMbit = sc.Throughput
		for _, s := range sc.Repeats {
			ar.RepeatThroughputMbit = append(ar.RepeatThroughputMbit, s.ThroughputMbit)
		}
		// Pooled post-warm-up samples, for the CDF plot only.
		for _, r := range rs {
			if _, e := stats.SummariseRepeat(r.StatsRepeat(), warmup); r.Failed != "" || e != nil {
				continue
			}
			for _, s := range r.Samples {
				if s.Offset >= warmup {
					ar.pooled = append(ar.pooled, ms(s.RTT))
				}
			}
		}
	}

	var connect []float64
	for _, r := range rs {
		if r.Failed == "" && r.ConnectTime > 0 {
			connect = append(connect, ms(r.ConnectTime))
		}
	}
	if s, err := stats.Describe(connect); err == nil {
		ar.ConnectMs = &s
	}
	if IsQUIC(arm) {
		ar.GSO = gsoSummaries(rs)
	}
	seen := map[string]bool{}
	for _, r := range rs {
		for _, cc := range r.CongestionControl {
			if !seen[cc] {
				seen[cc] = true
				ar.CongestionControl = append(ar.CongestionControl, cc)
			}
		}
	}
	return ar, nil
}

// armWarmup is the override, or the one warm-up every measured run of the
// arm recorded.
func armWarmup(rs []results.Run, opts Options) (time.Duration, error) {
	if opts.OverrideWarmup {
		return opts.Warmup, nil
	}
	var w time.Duration
	found := false
	for _, r := range rs {
		if r.Failed != "" {
			continue
		}
		if !found {
			w, found = r.Warmup, true
			continue
		}
		if r.Warmup != w {
			return 0, fmt.Errorf("runs recorded different warm-ups (%v in one, %v in r%d); pass a warm-up override (-warmup) to summarise them alike", w, r.Warmup, r.Repeat)
		}
	}
	if w < 0 {
		return 0, fmt.Errorf("runs recorded a negative warm-up %v; pass a warm-up override (-warmup)", w)
	}
	return w, nil
}

// IsQUIC reports whether an arm carries its channels over QUIC.
func IsQUIC(arm string) bool { return arm == ArmQUIC || strings.HasPrefix(arm, ArmQUIC+"-") }

// armRank orders the known arms as the tables show them.
func armRank(arm string) int {
	switch arm {
	case ArmTCP:
		return 0
	case ArmQUIC:
		return 1
	case ArmQUICPerChannel:
		return 2
	case ArmQUICPriority:
		return 3
	}
	return 4
}

func compareArms(a, b string) int {
	if c := cmp.Compare(armRank(a), armRank(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// compareCells orders the headline before sensitivity cells, then by
// congestion control (reno first), profile and loss.
func compareCells(a, b results.Cell) int {
	if a.Sensitivity != b.Sensitivity {
		if !a.Sensitivity {
			return -1
		}
		return 1
	}
	if a.CC != b.CC {
		switch {
		case a.CC == "reno":
			return -1
		case b.CC == "reno":
			return 1
		}
		return strings.Compare(a.CC, b.CC)
	}
	if c := cmp.Compare(a.RTTms, b.RTTms); c != 0 {
		return c
	}
	if c := cmp.Compare(b.RateMbit, a.RateMbit); c != 0 {
		return c
	}
	// Sessions and cap before loss, so cells that share a table title
	// (CellTitle) are adjacent.
	if c := cmp.Compare(a.Sessions, b.Sessions); c != 0 {
		return c
	}
	if c := cmp.Compare(a.BulkCapFraction, b.BulkCapFraction); c != 0 {
		return c
	}
	return cmp.Compare(a.LossPct, b.LossPct)
}

func compareProfiles(a, b results.Cell, la, lb float64) int {
	if c := cmp.Compare(a.RTTms, b.RTTms); c != 0 {
		return c
	}
	if c := cmp.Compare(b.RateMbit, a.RateMbit); c != 0 {
		return c
	}
	return cmp.Compare(la, lb)
}

// pairs are the readings made in every cell where both arms exist: each
// QUIC arm against tcp, and the priority arm against plain quic.
func pairs(c *CellReport) [][2]string {
	var out [][2]string
	if c.Arm(ArmTCP) != nil {
		for _, a := range c.Arms {
			if a.Arm != ArmTCP {
				out = append(out, [2]string{ArmTCP, a.Arm})
			}
		}
	}
	if c.Arm(ArmQUIC) != nil && c.Arm(ArmQUICPriority) != nil {
		out = append(out, [2]string{ArmQUIC, ArmQUICPriority})
	}
	return out
}

func compareCell(c *CellReport) []Comparison {
	out := []Comparison{}
	for _, p := range pairs(c) {
		a, b := c.Arm(p[0]), c.Arm(p[1])
		cmpn := Comparison{A: p[0], B: p[1]}
		sc, err := stats.Compare(a.stats, b.stats)
		if err != nil {
			cmpn.Error = err.Error()
			cmpn.Reading = "not compared"
			out = append(out, cmpn)
			continue
		}
		cmpn.DeltaMs, cmpn.ThresholdMs = ms(sc.Delta), ms(sc.Threshold)
		cmpn.Verdict, cmpn.Reason, cmpn.U = sc.Verdict, sc.Reason, sc.U
		cmpn.Reading = reading(p[1], sc.Verdict)
		out = append(out, cmpn)
	}
	return out
}

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

func reading(b string, v stats.Verdict) string {
	switch v {
	case stats.Better, stats.Worse:
		return ArmLabel(b) + " " + string(v)
	}
	return string(v)
}

func gsoSummaries(rs []results.Run) []GSOSummary {
	var out []GSOSummary
	for _, src := range []string{"queue", "counters"} {
		g := GSOSummary{Source: src}
		reasons := map[string]bool{}
		for _, r := range rs {
			res := r.GSOQueue
			if src == "counters" {
				res = r.GSOCounters
			}
			if res == nil {
				continue
			}
			if g.Runs == 0 || res.PooledMean < g.PooledMeanMin {
				g.PooledMeanMin = res.PooledMean
			}
			if g.Runs == 0 || res.PooledMean > g.PooledMeanMax {
				g.PooledMeanMax = res.PooledMean
			}
			g.Runs++
			g.Max = max(g.Max, res.Max)
			if res.Expected != 0 {
				if g.Expected != 0 && g.Expected != res.Expected {
					reasons[fmt.Sprintf("runs expected different sizes (%d and %d)", g.Expected, res.Expected)] = true
				}
				g.Expected = res.Expected
			}
			g.Used += res.Used
			g.Total += res.Total
			g.Oversize += res.Oversize
			switch res.Verdict {
			case gsocheck.Off:
				g.Off++
			case gsocheck.On:
				g.On++
			default:
				g.Inconclusive++
			}
			if res.Verdict != gsocheck.Off && res.Reason != "" && !reasons[res.Reason] {
				reasons[res.Reason] = true
				g.Reasons = append(g.Reasons, fmt.Sprintf("r%d: %s", r.Repeat, res.Reason))
			}
		}
		if g.Runs == 0 {
			continue
		}
		switch {
		case g.On > 0:
			g.Verdict = gsocheck.On
		case g.Inconclusive > 0:
			g.Verdict = gsocheck.Inconclusive
		default:
			g.Verdict = gsocheck.Off
		}
		out = append(out, g)
	}
	return out
}

func connectRows(runs []results.Run) []ConnectRow {
	type key struct {
		rtt, rate float64
		arm       string
	}
	vals := map[key][]float64{}
	cells := map[key]results.Cell{}
	for _, r := range runs {
		if r.Failed != "" || r.ConnectTime <= 0 {
			continue
		}
		k := key{r.Cell.RTTms, r.Cell.RateMbit, r.Arm}
		vals[k] = append(vals[k], ms(r.ConnectTime))
		cells[k] = r.Cell
	}
	var out []ConnectRow
	for k, v := range vals {
		s, _ := stats.Describe(v) // v is non-empty by construction
		c := cells[k]
		out = append(out, ConnectRow{Profile: c.Profile, Title: c.Title(), RTTms: c.RTTms, RateMbit: c.RateMbit, Arm: k.arm, Ms: s})
	}
	slices.SortFunc(out, func(a, b ConnectRow) int {
		ca := results.Cell{RTTms: a.RTTms, RateMbit: a.RateMbit}
		cb := results.Cell{RTTms: b.RTTms, RateMbit: b.RateMbit}
		if c := compareProfiles(ca, cb, 0, 0); c != 0 {
			return c
		}
		return compareArms(a.Arm, b.Arm)
	})
	return out
}

func warnings(rep *Report, runs []results.Run) []Warning {
	var ws []Warning
	for _, c := range rep.Cells {
		label := c.Label()
		add := func(arm, kind, detail string) {
			ws = append(ws, Warning{Cell: label, Dir: c.Dir, Arm: arm, Kind: kind, Detail: detail})
		}
		if c.Arm(ArmTCP) == nil {
			add("", WarnNoCompare, "no tcp arm in this cell, so nothing to read the QUIC arms against")
		}
		if len(c.Arms) == 1 && c.Arms[0].Arm == ArmTCP {
			add("", WarnNoCompare, "only the tcp arm was recorded in this cell")
		}
		for _, cp := range c.Comparisons {
			if cp.Error != "" {
				add(cp.B, WarnNoCompare, fmt.Sprintf("%s against %s: %s", cp.B, cp.A, cp.Error))
			}
		}
		if c.Sessions != nil {
			for _, a := range c.Sessions.Arms {
				if a.Timeouts > 0 {
					add(a.Arm, WarnTimeout, fmt.Sprintf("%d interactive exchange(s) timed out across the %d sessions (per session in the sessions section)", a.Timeouts, c.Sessions.Sessions))
				}
				if a.Error != "" {
					add(a.Arm, WarnUnmeasured, "sessions: "+a.Error)
				}
			}
		}
		for _, a := range c.Arms {
			if a.Timeouts > 0 {
				var which []string
				for i, n := range a.TimeoutsPerRepeat {
					if n > 0 {
						which = append(which, fmt.Sprintf("%d in r%d", n, repeatNumber(runs, c.Dir, a.Arm, i)))
					}
				}
				add(a.Arm, WarnTimeout, fmt.Sprintf("%d interactive exchange(s) timed out (%s); a timeout ends the channel, so that repeat has fewer samples", a.Timeouts, strings.Join(which, ", ")))
			}
			if a.Unmeasured > 0 {
				add(a.Arm, WarnUnmeasured, fmt.Sprintf("%d of %d repeats unmeasured: %s", a.Unmeasured, a.Runs, strings.Join(a.Failures, "; ")))
			}
			if IsQUIC(a.Arm) {
				if missing, total := gsoMissing(runs, c.Dir, a.Arm); len(missing) > 0 {
					add(a.Arm, WarnGSO, fmt.Sprintf("no GSO evidence (neither queue samples nor egress counters) in %d of %d runs (%s), so offload was not verified off there",
						len(missing), total, strings.Join(missing, ", ")))
				}
				for _, g := range a.GSO {
					if g.Verdict != gsocheck.Off {
						d := fmt.Sprintf("GSO check from %s: %s in %d of %d runs (on %d, inconclusive %d)", g.Source, g.Verdict, g.On+g.Inconclusive, g.Runs, g.On, g.Inconclusive)
						if len(g.Reasons) > 0 {
							d += ": " + strings.Join(g.Reasons, "; ")
						}
						add(a.Arm, WarnGSO, d)
					}
				}
				if n := quicGSOUsed(runs, c.Dir, a.Arm); n > 0 {
					add(a.Arm, WarnGSO, fmt.Sprintf("quic-go reported GSO in use on a connection in %d run(s)", n))
				}
			}
			if d := shaperTrouble(runs, c.Dir, a.Arm); d != "" {
				add(a.Arm, WarnShaper, d)
			}
			if a.Arm == ArmTCP && c.Cell.CC != "" {
				for _, cc := range a.CongestionControl {
					if !strings.Contains(cc, c.Cell.CC) {
						add(a.Arm, WarnCC, fmt.Sprintf("asked for %s but a socket reported %q", c.Cell.CC, cc))
					}
				}
			}
		}
	}
	backends := map[string]bool{}
	var list []string
	for _, r := range runs {
		if !backends[r.Link.Backend] {
			backends[r.Link.Backend] = true
			list = append(list, fmt.Sprintf("%q", r.Link.Backend))
		}
	}
	if len(list) > 1 {
		ws = append(ws, Warning{Kind: WarnBackend, Detail: "runs used different link backends: " + strings.Join(list, ", ") + "; cells may not be comparable"})
	}
	return ws
}

// repeatNumber is the recorded Repeat of the i-th run (in repeat order) of
// an arm.
func repeatNumber(runs []results.Run, dir, arm string, i int) int {
	var reps []int
	for _, r := range runs {
		if r.Arm == arm && r.Cell.Dir() == dir {
			reps = append(reps, r.Repeat)
		}
	}
	slices.Sort(reps)
	if i < len(reps) {
		return reps[i]
	}
	return i + 1
}

// gsoMissing lists the runs of an arm that finished without failing but
// recorded no offload evidence, out of all such runs.
func gsoMissing(runs []results.Run, dir, arm string) ([]string, int) {
	var missing []string
	total := 0
	for _, r := range runs {
		if r.Arm != arm || r.Cell.Dir() != dir || r.Failed != "" {
			continue
		}
		total++
		if r.GSOQueue == nil && r.GSOCounters == nil {
			missing = append(missing, fmt.Sprintf("r%d", r.Repeat))
		}
	}
	return missing, total
}

func quicGSOUsed(runs []results.Run, dir, arm string) int {
	n := 0
	for _, r := range runs {
		if r.Arm == arm && r.Cell.Dir() == dir && slices.Contains(r.QUICGSO, true) {
			n++
		}
	}
	return n
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// ShaperLateLimit is the emulator lateness (99th percentile, either
// direction) above which a run is flagged: about one 1500-byte frame's
// serialisation at 10 Mbit/s, small against the reference profiles' delays
// but worth knowing.
const ShaperLateLimit = time.Millisecond

// WithoutRealTime reports whether the emulator ran without real-time
// scheduling priority, so that its timing competed with the endpoints'.
func WithoutRealTime(sh shapedlink.ShaperReport) bool {
	return strings.HasPrefix(sh.Priority, "SCHED_OTHER")
}

// shaperTrouble describes the runs of an arm in a cell whose emulator
// counters say the host, not the link model, lost or delayed frames, or
// whose emulator ran without real-time priority; "" when there are none
// (or the runs predate the record, or used netem).
func shaperTrouble(runs []results.Run, dir, arm string) string {
	var parts []string
	for _, r := range runs {
		if r.Arm != arm || r.Cell.Dir() != dir || r.Link.Shaper == nil {
			continue
		}
		if why := r.Link.Shaper.Distorted(ShaperLateLimit); why != "" {
			parts = append(parts, fmt.Sprintf("r%d: %s", r.Repeat, why))
		}
		if WithoutRealTime(*r.Link.Shaper) {
			parts = append(parts, fmt.Sprintf("r%d: the emulator ran without real-time priority (%s)", r.Repeat, r.Link.Shaper.Priority))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "the emulator's own counters flag " + strings.Join(parts, "; ")
}
