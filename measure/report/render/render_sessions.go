package render

import (
	"fmt"

	"github.com/shakenfist/quicbench/measure/report"
)

// mdSessions writes the sessions section: for every cell with Sessions
// set, the all-session and per-session p95, Jain's index and the total
// throughput per arm, the readings between arms, and each session's row.
func mdSessions(r *report.Report, m *md) {
	var cells []*report.CellReport
	for i := range r.Cells {
		if r.Cells[i].Sessions != nil {
			cells = append(cells, &r.Cells[i])
		}
	}
	if len(cells) == 0 {
		return
	}
	m.p("## Sessions sharing one bottleneck")
	m.p("")
	m.p(proseSessions)
	m.p("")
	m.header("cell", "loss", "arm", "all-session p95", "p95 spread", "p95 range",
		"session p95s: median (lowest-highest)", "Jain median (range)", "total Mbit/s", "timeouts", "repeats")
	for _, c := range cells {
		for _, a := range c.Sessions.Arms {
			reps := fmt.Sprintf("%d/%d", a.Measured, a.Runs)
			if a.Measured == 0 {
				m.row(report.CellTitle(c.Cell), pct(c.Cell.LossPct), a.Arm, "-", "-", "-", "-", "-", "-", fmt.Sprint(a.Timeouts), reps)
				continue
			}
			jain := "-"
			if a.Jain != nil {
				jain = fmt.Sprintf("%.3f (%.3f-%.3f)", a.Jain.Median, a.Jain.Min, a.Jain.Max)
			}
			sp := a.SessionP95Ms
			m.row(report.CellTitle(c.Cell), pct(c.Cell.LossPct), a.Arm, f1(a.AllP95Ms), f1(a.AllSpreadMs), f1(a.AllP95MinMs)+"-"+f1(a.AllP95MaxMs),
				fmt.Sprintf("%s (%s-%s)", f1(sp.Median), f1(sp.Min), f1(sp.Max)), jain,
				fmt.Sprintf("%.2f (%.2f-%.2f)", a.TotalMbit.Median, a.TotalMbit.Min, a.TotalMbit.Max), fmt.Sprint(a.Timeouts), reps)
		}
	}
	m.p("")
	m.p("### Reading them: all-session p95 by the spread rule")
	m.p("")
	m.p(proseSessionsReading)
	m.p("")
	m.header("cell", "loss", "B against A", "delta", "threshold", "resolves as", "U-test p")
	notes := &footnotes{}
	for _, c := range cells {
		for _, cp := range c.Sessions.Comparisons {
			pair := cp.B + " against " + cp.A
			if cp.Error != "" {
				m.row(report.CellTitle(c.Cell), pct(c.Cell.LossPct), pair, "-", "-", "not compared: "+cp.Error, "-")
				continue
			}
			verdict := cp.Reading
			if cp.Reason != "" && (c.Sessions.Arm(cp.A).Measured < 2 || c.Sessions.Arm(cp.B).Measured < 2) {
				verdict += notes.mark(cp.Reason)
			}
			m.row(report.CellTitle(c.Cell), pct(c.Cell.LossPct), pair, fmt.Sprintf("%+.1f", cp.DeltaMs), f1(cp.ThresholdMs), verdict, utest(cp, notes))
		}
	}
	notes.write(m)
	m.p("")
	m.p("### Every session")
	m.p("")
	m.p(proseEverySession)
	m.p("")
	m.header("cell", "loss", "arm", "session", "p50", "p95", "p99", "p95 spread", "p95 range", "Mbit/s", "timeouts", "repeats")
	for _, c := range cells {
		for _, a := range c.Sessions.Arms {
			for _, s := range a.PerSession {
				reps := fmt.Sprintf("%d/%d", s.Measured, a.Runs)
				if s.Measured == 0 {
					m.row(report.CellTitle(c.Cell), pct(c.Cell.LossPct), a.Arm, fmt.Sprint(s.Index), "-", "-", "-", "-", "-", "-", fmt.Sprint(s.Timeouts), reps)
					continue
				}
				t := s.ThroughputMbit
				m.row(report.CellTitle(c.Cell), pct(c.Cell.LossPct), a.Arm, fmt.Sprint(s.Index), f1(s.P50Ms), f1(s.P95Ms), f1(s.P99Ms), f1(s.SpreadMs),
					f1(s.P95MinMs)+"-"+f1(s.P95MaxMs), fmt.Sprintf("%.2f (%.2f-%.2f)", t.Median, t.Min, t.Max), fmt.Sprint(s.Timeouts), reps)
			}
		}
	}
	m.p("")
}
