package render

import (
	"fmt"

	"github.com/shakenfist/quicbench/measure/report"
)

func mdCPU(r *report.Report, m *md) {
	any := false
	for _, c := range r.Cells {
		for _, a := range c.Arms {
			any = any || a.CPU != nil
		}
	}
	if !any {
		return
	}
	m.p("## CPU and memory")
	m.p("")
	m.p(proseCPU)
	m.p("")
	m.header("profile", "loss", "cc", "arm", "server ms/MB", "client ms/MB", "server RSS MiB", "client RSS MiB", "runs")
	for _, c := range r.Cells {
		for _, a := range c.Arms {
			if a.CPU == nil {
				continue
			}
			u := a.CPU
			m.row(report.CellTitle(c.Cell), pct(c.Cell.LossPct), ccLabel(c.Cell), a.Arm,
				fmt.Sprintf("%.2f (%.2f-%.2f)", u.ServerMsPerMB.Median, u.ServerMsPerMB.Min, u.ServerMsPerMB.Max),
				fmt.Sprintf("%.2f (%.2f-%.2f)", u.ClientMsPerMB.Median, u.ClientMsPerMB.Min, u.ClientMsPerMB.Max),
				fmt.Sprintf("%.1f", u.ServerMaxRSSMiB), fmt.Sprintf("%.1f", u.ClientMaxRSSMiB),
				fmt.Sprint(u.Runs))
		}
	}
	m.p("")
}
