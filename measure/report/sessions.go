package report

import (
	"errors"
	"fmt"
	"slices"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/stats"
)

// SessionsReport is the per-session view of a cell whose runs carried
// several sessions over one link (results.Cell.Sessions set).
type SessionsReport struct {
	Sessions int           `json:"sessions"`
	Arms     []SessionsArm `json:"arms"`
	// Comparisons read each arm against tcp, quic-per-channel against
	// quic, and quic against tcp-mux, on the all-session p95
	// (stats.Compare).
	Comparisons []Comparison `json:"comparisons"`
}

// Arm returns the named arm, or nil.
func (s *SessionsReport) Arm(name string) *SessionsArm {
	for i := range s.Arms {
		if s.Arms[i].Arm == name {
			return &s.Arms[i]
		}
	}
	return nil
}

// SessionsArm is one arm of a multi-session cell.
type SessionsArm struct {
	Arm      string `json:"arm"`
	Runs     int    `json:"runs"`
	Measured int    `json:"measured"`
	Error    string `json:"error,omitempty"`
	// AllP95Ms is the median over repeats of each repeat's p95 over every
	// session's post-warm-up round trips taken together (the round trip
	// any session's user sees), with the spread and range over repeats:
	// pooling is across the sessions of one repeat, never across repeats.
	AllP95Ms       float64   `json:"all_p95_ms"`
	AllSpreadMs    float64   `json:"all_p95_spread_ms"`
	AllP95MinMs    float64   `json:"all_p95_min_ms"`
	AllP95MaxMs    float64   `json:"all_p95_max_ms"`
	RepeatAllP95Ms []float64 `json:"repeat_all_p95_ms"`
	// PerSession summarises each session over repeats by the cell rule
	// (stats.SummariseCell on that session's figures).
	PerSession []SessionSummary `json:"per_session"`
	// SessionP95Ms is the median, lowest and highest of the sessions'
	// own median p95s.
	SessionP95Ms stats.Summary `json:"session_p95_ms"`
	// Jain is Jain's fairness index over the sessions' saturating-channel
	// throughputs, one per measured repeat (RepeatJain), as median and
	// range; nil for one session.
	Jain       *stats.Summary `json:"jain,omitempty"`
	RepeatJain []float64      `json:"repeat_jain,omitempty"`
	// TotalMbit is the sessions' saturating channels summed per repeat.
	TotalMbit stats.Summary `json:"total_mbit"`
	Timeouts  int           `json:"timeouts"`

	stats stats.Cell // the all-session figures, for Compare
}

// SessionSummary is one session (by the client's dial order) over repeats.
type SessionSummary struct {
	Index          int           `json:"index"`
	Measured       int           `json:"measured"`
	Error          string        `json:"error,omitempty"`
	P50Ms          float64       `json:"p50_ms"`
	P95Ms          float64       `json:"p95_ms"`
	P99Ms          float64       `json:"p99_ms"`
	SpreadMs       float64       `json:"p95_spread_ms"`
	P95MinMs       float64       `json:"p95_min_ms"`
	P95MaxMs       float64       `json:"p95_max_ms"`
	RepeatP95Ms    []float64     `json:"repeat_p95_ms"`
	ThroughputMbit stats.Summary `json:"throughput_mbit"`
	Timeouts       int           `json:"timeouts"`
}

// buildSessions summarises the arms of a multi-session cell; runs are
// grouped by arm and in repeat order.
func buildSessions(c results.Cell, byArm map[string][]results.Run, opts Options) (*SessionsReport, error) {
	sr := &SessionsReport{Sessions: c.SessionCount()}
	for arm, rs := range byArm {
		sa, err := buildSessionsArm(arm, rs, opts)
		if err != nil {
			return nil, fmt.Errorf("arm %s: %w", arm, err)
		}
		sr.Arms = append(sr.Arms, sa)
	}
	slices.SortFunc(sr.Arms, func(a, b SessionsArm) int { return compareArms(a.Arm, b.Arm) })
	var arms []string
	for _, a := range sr.Arms {
		arms = append(arms, a.Arm)
	}
	sr.Comparisons = []Comparison{}
	for _, p := range readings(arms, [2]string{ArmQUIC, ArmQUICPerChannel}) {
		a, b := sr.Arm(p[0]), sr.Arm(p[1])
		cp := Comparison{A: p[0], B: p[1]}
		sc, err := stats.Compare(a.stats, b.stats)
		if err != nil {
			cp.Error, cp.Reading = err.Error(), "not compared"
		} else {
			cp.DeltaMs, cp.ThresholdMs = ms(sc.Delta), ms(sc.Threshold)
			cp.Verdict, cp.Reason, cp.U = sc.Verdict, sc.Reason, sc.U
			cp.Reading = reading(p[1], sc.Verdict)
		}
		sr.Comparisons = append(sr.Comparisons, cp)
	}
	return sr, nil
}

func buildSessionsArm(arm string, rs []results.Run, opts Options) (SessionsArm, error) {
	sa := SessionsArm{Arm: arm, Runs: len(rs)}
	warmup, err := armWarmup(rs, opts)
	if err != nil {
		return sa, err
	}
	n := 0
	for _, r := range rs {
		n = max(n, len(r.SessionResults()))
	}
	// The all-session repeats, and each session's repeats.
	all := make([]stats.Repeat, len(rs))
	per := make([][]stats.Repeat, n)
	var jain, total []float64
	for i, r := range rs {
		ss := r.SessionResults()
		rep := stats.Repeat{Failed: r.Failed}
		var tput []float64
		for k := range n {
			if k >= len(ss) {
				// A run that recorded fewer sessions than its neighbours
				// cannot be read per session.
				per[k] = append(per[k], stats.Repeat{Failed: fmt.Sprintf("session %d not recorded", k)})
				continue
			}
			s := ss[k]
			per[k] = append(per[k], s.StatsRepeat(r.Failed))
			rep.Samples = append(rep.Samples, s.Samples...)
			rep.Timeouts += s.Timeouts
			rep.ThroughputMbit += s.ThroughputMbit
			tput = append(tput, s.ThroughputMbit)
		}
		all[i] = rep
		if r.Failed != "" || len(ss) != n {
			continue
		}
		total = append(total, rep.ThroughputMbit)
		if n > 1 {
			if j, err := stats.JainIndex(tput); err == nil {
				jain = append(jain, j)
			}
		}
	}
	sc, err := stats.SummariseCell(all, warmup)
	sa.stats = sc
	sa.Measured, sa.Timeouts = sc.Measured, sc.Timeouts
	if err != nil {
		if !errors.Is(err, stats.ErrNoRepeats) {
			return sa, err
		}
		sa.Error = err.Error()
	} else {
		sa.AllP95Ms, sa.AllSpreadMs = ms(sc.P95), ms(sc.Spread)
		sa.AllP95MinMs, sa.AllP95MaxMs = ms(sc.P95Min), ms(sc.P95Max)
		for _, d := range sc.RepeatP95s() {
			sa.RepeatAllP95Ms = append(sa.RepeatAllP95Ms, ms(d))
		}
	}
	var medians []float64
	for k := range n {
		ss := SessionSummary{Index: k}
		c, err := stats.SummariseCell(per[k], warmup)
		ss.Measured, ss.Timeouts = c.Measured, c.Timeouts
		if err != nil {
			if !errors.Is(err, stats.ErrNoRepeats) {
				return sa, err
			}
			ss.Error = err.Error()
		} else {
			ss.P50Ms, ss.P95Ms, ss.P99Ms = ms(c.P50), ms(c.P95), ms(c.P99)
			ss.SpreadMs, ss.P95MinMs, ss.P95MaxMs = ms(c.Spread), ms(c.P95Min), ms(c.P95Max)
			for _, d := range c.RepeatP95s() {
				ss.RepeatP95Ms = append(ss.RepeatP95Ms, ms(d))
			}
			ss.ThroughputMbit = c.Throughput
			medians = append(medians, ss.P95Ms)
		}
		sa.PerSession = append(sa.PerSession, ss)
	}
	sa.SessionP95Ms, _ = stats.Describe(medians) // zero when no session was measured
	if s, err := stats.Describe(jain); err == nil {
		sa.Jain, sa.RepeatJain = &s, jain
	}
	sa.TotalMbit, _ = stats.Describe(total)
	return sa, nil
}
