package report

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/neighbours"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/stats"
)

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
	var err error
	if rep.Neighbours, err = neighbours.Build(runs); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
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
	if runsQUIC(arm, rs) {
		ar.GSO = gsoSummaries(rs)
	}
	ar.Recovery = recoverySummaries(rs)
	ar.timeline = firstTimeline(rs)
	seen := map[string]bool{}
	for _, r := range rs {
		for _, cc := range r.CongestionControl {
			if !seen[cc] {
				seen[cc] = true
				ar.CongestionControl = append(ar.CongestionControl, cc)
			}
		}
		if t := r.TCPController; t != "" && !slices.Contains(ar.TCPController, t) {
			ar.TCPController = append(ar.TCPController, t)
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
			return 0, fmt.Errorf("runs recorded different warm-ups (%v in one, %v in r%d); "+
				"pass a warm-up override (-warmup) to summarise them alike", w, r.Warmup, r.Repeat)
		}
	}
	if w < 0 {
		return 0, fmt.Errorf("runs recorded a negative warm-up %v; pass a warm-up override (-warmup)", w)
	}
	return w, nil
}

// pairs are the readings made in a cell of one session, each where both
// its arms were measured (see Comparison).
func pairs(c *CellReport) [][2]string {
	var arms []string
	for _, a := range c.Arms {
		arms = append(arms, a.Arm)
	}
	return readings(arms, [2]string{ArmQUIC, ArmQUICPriority})
}

// readings are every arm of arms (in table order) against tcp, then the
// QUIC arms against each tcp arm with a controller of its own
// ("tcp-quicreno", measure.Arm.PinnedCC), then each of the pairs whose both
// arms are in arms, then quic against tcp-mux.
func readings(arms []string, pairs ...[2]string) [][2]string {
	var out [][2]string
	if slices.Contains(arms, ArmTCP) {
		for _, a := range arms {
			if a != ArmTCP {
				out = append(out, [2]string{ArmTCP, a})
			}
		}
	}
	for _, t := range arms {
		if _, ok := measure.Arm(t).PinnedCC(); !ok {
			continue
		}
		for _, q := range arms {
			if q == ArmQUIC || q == ArmQUICPerChannel {
				out = append(out, [2]string{t, q})
			}
		}
	}
	for _, p := range append(pairs, [2]string{ArmTCPMux, ArmQUIC}) {
		if slices.Contains(arms, p[0]) && slices.Contains(arms, p[1]) {
			out = append(out, p)
		}
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

func reading(b string, v stats.Verdict) string {
	switch v {
	case stats.Better, stats.Worse:
		return ArmLabel(b) + " " + string(v)
	}
	return string(v)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
