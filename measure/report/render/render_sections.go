package render

import (
	"fmt"
	"strconv"

	"github.com/shakenfist/quicbench/gsocheck"
	"github.com/shakenfist/quicbench/measure/report"
)

func mdThroughput(r *report.Report, m *md) {
	m.p("## Throughput of the saturating channel")
	m.p("")
	m.p(proseThroughput)
	m.p("")
	arms := allArms(r)
	m.header(append([]string{"profile", "loss", "cc"}, arms...)...)
	for _, c := range r.Cells {
		cols := []string{report.CellTitle(c.Cell), pct(c.Cell.LossPct), ccLabel(c.Cell)}
		for _, name := range arms {
			a := c.Arm(name)
			switch {
			case a == nil:
				cols = append(cols, "")
			case a.Measured == 0:
				cols = append(cols, "-")
			default:
				t := a.ThroughputMbit
				cols = append(cols, fmt.Sprintf("%.2f (%.2f-%.2f)", t.Median, t.Min, t.Max))
			}
		}
		m.row(cols...)
	}
	m.p("")
}

func allArms(r *report.Report) []string {
	var arms []string
	for _, c := range r.Cells {
		for _, a := range c.Arms {
			if !contains(arms, a.Arm) {
				arms = append(arms, a.Arm)
			}
		}
	}
	report.SortArms(arms)
	return arms
}

func mdConnect(r *report.Report, m *md) {
	m.p("## Connect time")
	m.p("")
	if len(r.ConnectTime) == 0 {
		m.p(proseNoConnect)
		m.p("")
		return
	}
	m.p(proseConnect)
	m.p("")
	var arms []string
	for _, row := range r.ConnectTime {
		if !contains(arms, row.Arm) {
			arms = append(arms, row.Arm)
		}
	}
	report.SortArms(arms)
	m.header(append([]string{"profile"}, arms...)...)
	for i := 0; i < len(r.ConnectTime); {
		j := i
		cols := []string{r.ConnectTime[i].Title}
		byArm := map[string]report.ConnectRow{}
		for j < len(r.ConnectTime) && r.ConnectTime[j].Title == r.ConnectTime[i].Title {
			byArm[r.ConnectTime[j].Arm] = r.ConnectTime[j]
			j++
		}
		for _, a := range arms {
			if row, ok := byArm[a]; ok {
				cols = append(cols, fmt.Sprintf("%s ms (%s-%s), n=%d", f1(row.Ms.Median), f1(row.Ms.Min), f1(row.Ms.Max), row.Ms.N))
			} else {
				cols = append(cols, "")
			}
		}
		m.row(cols...)
		i = j
	}
	m.p("")
}

func mdGSO(r *report.Report, m *md) {
	m.p("## Was segmentation offload off?")
	m.p("")
	m.p(proseGSO)
	m.p("")
	rows := 0
	for _, c := range r.Cells {
		for _, a := range c.Arms {
			if !a.QUIC() {
				continue
			}
			if rows == 0 {
				m.header("profile", "loss", "cc", "arm", "evidence", "verdict", "pooled mean", "max", "expected", "samples used")
			}
			rows++
			if len(a.GSO) == 0 {
				m.row(report.CellTitle(c.Cell), pct(c.Cell.LossPct), ccLabel(c.Cell), a.Arm, "none recorded", "not verified", "-", "-", "-", "-")
				continue
			}
			for _, g := range a.GSO {
				verdict := fmt.Sprintf("%s (%d/%d runs)", g.Verdict, countFor(g), g.Runs)
				mean := fmt.Sprintf("%.1f", g.PooledMeanMin)
				if g.PooledMeanMax != g.PooledMeanMin {
					mean += fmt.Sprintf("-%.1f", g.PooledMeanMax)
				}
				maxCol, used := "-", ""
				if g.Source == "queue" {
					maxCol = fmt.Sprintf("%.0f", g.Max)
					used = fmt.Sprintf("%d of %d samples", g.Used, g.Total)
				} else {
					used = fmt.Sprintf("%d packets, %d oversize", g.Used, g.Oversize)
				}
				m.row(report.CellTitle(c.Cell), pct(c.Cell.LossPct), ccLabel(c.Cell), a.Arm, g.Source, verdict, mean, maxCol, strconv.Itoa(g.Expected), used)
			}
		}
	}
	if rows == 0 {
		m.p(proseNoQUIC)
	}
	m.p("")
}

func countFor(g report.GSOSummary) int {
	switch g.Verdict {
	case gsocheck.Off:
		return g.Off
	case gsocheck.On:
		return g.On
	}
	return g.Inconclusive
}

func mdWarnings(r *report.Report, m *md) {
	m.p("## Warnings")
	m.p("")
	m.p(proseWarnings)
	m.p("")
	if len(r.Warnings) == 0 {
		m.p(proseNoWarnings)
		m.p("")
		return
	}
	for _, w := range r.Warnings {
		where := "all runs"
		if w.Cell != "" {
			where = w.Cell
			if w.Arm != "" {
				where += ", " + w.Arm
			}
		}
		m.p("- **%s** (%s): %s", where, w.Kind, w.Detail)
	}
	m.p("")
}
