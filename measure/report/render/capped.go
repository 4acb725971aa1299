package render

import (
	"fmt"

	"github.com/shakenfist/quicbench/measure/report"
)

// mdCapped writes the capped-display section when any cell capped the
// saturating channel: per profile, congestion control, sessions and loss,
// the tcp-against-quic reading at each cap beside the uncapped cell, if the
// runs hold one, so a reader sees directly whether the penalty shrinks.
func mdCapped(r *report.Report, m *md) {
	found := false
	for _, c := range r.Cells {
		if c.Cell.BulkCapFraction != 0 {
			found = true
			break
		}
	}
	if !found {
		return
	}
	m.p("## Display capped below the link rate")
	m.p("")
	m.p(proseCapped)
	m.p("")
	m.header("profile", "loss", "cc", "display cap", "tcp p95", "tcp spread", "quic p95", "quic spread",
		"delta", "threshold", "resolves as", "tcp Mbit/s", "quic Mbit/s")
	// The cells are sorted by profile, then cap, then loss; list them by
	// loss, then cap, so each loss level's caps sit together.
	type key struct {
		rtt, rate, loss float64
		cc              string
		sessions        int
	}
	var order []key
	byKey := map[key][]*report.CellReport{}
	for i := range r.Cells {
		c := &r.Cells[i]
		k := key{c.Cell.RTTms, c.Cell.RateMbit, c.Cell.LossPct, c.Cell.CC, c.Cell.Sessions}
		if _, ok := byKey[k]; !ok {
			order = append(order, k)
		}
		byKey[k] = append(byKey[k], c)
	}
	for _, k := range order {
		cs := byKey[k]
		capped := false
		for _, c := range cs {
			capped = capped || c.Cell.BulkCapFraction != 0
		}
		if !capped {
			continue
		}
		for _, c := range cs {
			capLabel := "uncapped"
			if f := c.Cell.BulkCapFraction; f != 0 {
				capLabel = fmt.Sprintf("%g%% (%g Mbit/s)", 100*f, float64(c.Cell.BulkRateCapBps)/1e6)
			}
			title := c.Cell.Title()
			if c.Cell.Sessions != 0 {
				title += ", " + plural(c.Cell.Sessions, "session")
			}
			tcp, quic := c.Arm(report.ArmTCP), c.Arm(report.ArmQUIC)
			cols := []string{title, pct(c.Cell.LossPct), ccLabel(c.Cell), capLabel}
			for _, a := range []*report.ArmReport{tcp, quic} {
				if a == nil || a.Measured == 0 {
					cols = append(cols, "-", "-")
					continue
				}
				cols = append(cols, f1(a.P95Ms), f1(a.SpreadMs))
			}
			var cp *report.Comparison
			for i := range c.Comparisons {
				if c.Comparisons[i].A == report.ArmTCP && c.Comparisons[i].B == report.ArmQUIC {
					cp = &c.Comparisons[i]
				}
			}
			switch {
			case cp == nil:
				cols = append(cols, "-", "-", "no tcp and quic pair")
			case cp.Error != "":
				cols = append(cols, "-", "-", "not compared: "+cp.Error)
			default:
				cols = append(cols, fmt.Sprintf("%+.1f", cp.DeltaMs), f1(cp.ThresholdMs), cp.Reading)
			}
			for _, a := range []*report.ArmReport{tcp, quic} {
				if a == nil || a.Measured == 0 {
					cols = append(cols, "-")
					continue
				}
				cols = append(cols, fmt.Sprintf("%.2f", a.ThroughputMbit.Median))
			}
			m.row(cols...)
		}
	}
	m.p("")
}
