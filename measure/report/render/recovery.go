package render

import (
	"fmt"
	"image/color"
	"strconv"
	"strings"

	"github.com/shakenfist/quicbench/measure/report"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

func mdRecovery(r *report.Report, m *md) {
	found := false
	for _, c := range r.Cells {
		for _, a := range c.Arms {
			found = found || len(a.Recovery) > 0
		}
	}
	if !found {
		return
	}
	m.p("## Recovery after the link's scheduled events")
	m.p("")
	m.p("%s", proseRecovery)
	m.p("")
	m.header("profile", "loss", "arm", "event", "events", "not recovered", "median ms", "max ms", "per-repeat medians ms")
	for _, c := range r.Cells {
		for _, a := range c.Arms {
			for _, s := range a.Recovery {
				var reps []string
				for _, v := range s.RepeatMedianMs {
					reps = append(reps, strconv.FormatFloat(v, 'f', 0, 64))
				}
				event := "blackout"
				if s.Set == "rate" {
					event = "rate step down"
				}
				m.row(report.CellTitle(c.Cell), pct(c.Cell.LossPct), report.ArmLabel(a.Arm), event, strconv.Itoa(s.Events), strconv.Itoa(s.NotRecovered),
					fmt.Sprintf("%.0f", s.MedianMs), fmt.Sprintf("%.0f", s.MaxMs), strings.Join(reps, ", "))
			}
		}
	}
	m.p("")
}

// timelinePlot draws arm a's first scheduled run: its interactive round
// trips against time, with a grey line at each scheduled change (dashed
// for a link coming back up or a rate going back).
func timelinePlot(c *report.CellReport, a *report.ArmReport) (*plot.Plot, string, string, error) {
	tl := a.Timeline()
	if tl == nil || len(tl.Samples) == 0 {
		return nil, "", "", nil
	}
	p := newPlot(fmt.Sprintf("%s, r%d: interactive round trip", a.Arm, tl.Repeat), "time since the channels opened (s)", "round trip (ms)")
	pts := make(plotter.XYs, len(tl.Samples))
	top := 0.0
	for i, s := range tl.Samples {
		pts[i] = plotter.XY{X: s.Offset.Seconds(), Y: ms(s.RTT)}
		top = max(top, ms(s.RTT))
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return nil, "", "", err
	}
	l.Color = armColor(a.Arm)
	l.Width = vg.Points(1)
	p.Add(l)
	p.Y.Min = 0
	for _, e := range tl.Events {
		m, err := plotter.NewLine(plotter.XYs{{X: e.At.Seconds(), Y: 0}, {X: e.At.Seconds(), Y: top * 1.05}})
		if err != nil {
			return nil, "", "", err
		}
		m.Color = color.Gray{Y: 0x80}
		if e.Set == "up" {
			m.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
		}
		p.Add(m)
	}
	caption := fmt.Sprintf(captionTimeline, c.Label(), a.Arm, tl.Repeat, len(tl.Samples), len(tl.Events))
	return p, c.Dir + "_" + a.Arm + "_timeline", caption, nil
}
