package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/shakenfist/quicbench/measure/report"
)

// group is the cells that share a congestion-control setting.
type group struct {
	cc          string
	sensitivity bool
	cells       []*report.CellReport
}

func groups(r *report.Report) []group {
	var gs []group
	for i := range r.Cells {
		c := &r.Cells[i]
		if n := len(gs); n > 0 && gs[n-1].cc == c.Cell.CC && gs[n-1].sensitivity == c.Cell.Sensitivity {
			gs[n-1].cells = append(gs[n-1].cells, c)
			continue
		}
		gs = append(gs, group{cc: c.Cell.CC, sensitivity: c.Cell.Sensitivity, cells: []*report.CellReport{c}})
	}
	return gs
}

func (g group) title() string {
	if g.sensitivity {
		return fmt.Sprintf(titleSensitivity, g.cc)
	}
	return fmt.Sprintf(titleHeadline, g.cc)
}

func mdHeader(r *report.Report, m *md) {
	m.p("# quicbench summary")
	m.p("")
	src := ""
	if r.Source != "" {
		src = fmt.Sprintf(" from `%s`", r.Source)
	}
	m.p("%s%s in %s.", plural(r.Runs, "run"), src, plural(len(r.Cells), "cell"))
	switch {
	case r.WarmupOverridden:
		m.p(proseWarmupOverridden, seconds(r.WarmupMs))
	case r.WarmupVaries:
		m.p(proseWarmupVaries)
	default:
		m.p(proseWarmupRecorded, seconds(r.WarmupMs))
	}
	m.p("")
	m.p(proseMethod)
	m.p("")
}

func mdGroup(r *report.Report, m *md, g group) {
	m.p("## %s", g.title())
	m.p("")
	if g.sensitivity {
		m.p(proseSensitivity, g.cc)
	} else {
		m.p(proseHeadline, g.cc)
	}
	if cc := inForce(g); cc != "" {
		m.p(proseInForce, cc)
	}
	if t := controllerSettings(g); t != "" {
		m.p(proseControllerSettings, t)
	}
	m.p("")
	// One table per profile.
	for i := 0; i < len(g.cells); {
		j := i
		for j < len(g.cells) && report.CellTitle(g.cells[j].Cell) == report.CellTitle(g.cells[i].Cell) {
			j++
		}
		m.p("### %s", report.CellTitle(g.cells[i].Cell))
		m.p("")
		if g.cells[i].Cell.Sessions > 1 {
			m.p(proseSessionZero, g.cells[i].Cell.Sessions)
			m.p("")
		}
		m.header("loss", "arm", "p50", "p95", "p99", "p95 spread", "p95 range", "samples/run", "timeouts", "repeats")
		for _, c := range g.cells[i:j] {
			for _, a := range c.Arms {
				reps := fmt.Sprintf("%d/%d", a.Measured, a.Runs)
				if a.Measured == 0 {
					m.row(pct(c.Cell.LossPct), a.Arm, "-", "-", "-", "-", "-", "-", strconv.Itoa(a.Timeouts), reps)
					continue
				}
				m.row(pct(c.Cell.LossPct), a.Arm, f1(a.P50Ms), f1(a.P95Ms), f1(a.P99Ms), f1(a.SpreadMs),
					f1(a.P95MinMs)+"-"+f1(a.P95MaxMs), fmt.Sprintf("%.0f", a.SamplesPerRun), strconv.Itoa(a.Timeouts), reps)
			}
		}
		m.p("")
		i = j
	}
	// One reading table per pair of arms.
	for _, pr := range groupPairs(g) {
		m.p("### Reading them: %s against %s", report.ArmLabel(pr[1]), report.ArmLabel(pr[0]))
		m.p("")
		m.p(proseReading, pr[1], pr[0], pr[1])
		m.p("")
		m.header("profile", "loss", "delta", "threshold", "resolves as", pr[0]+" median p95 interval", pr[1]+" median p95 interval", "U-test p")
		notes := &footnotes{}
		for _, c := range g.cells {
			for _, cp := range c.Comparisons {
				if cp.A != pr[0] || cp.B != pr[1] {
					continue
				}
				if cp.Error != "" {
					m.row(report.CellTitle(c.Cell), pct(c.Cell.LossPct), "-", "-", "not compared: "+cp.Error, "-", "-", "-")
					continue
				}
				verdict := cp.Reading
				// The ordinary reason (|delta| within the threshold) is the
				// table itself; a verdict forced by too few repeats is not.
				if cp.Reason != "" && (c.Arm(cp.A).Measured < 2 || c.Arm(cp.B).Measured < 2) {
					verdict += notes.mark(cp.Reason)
				}
				m.row(report.CellTitle(c.Cell), pct(c.Cell.LossPct), fmt.Sprintf("%+.1f", cp.DeltaMs), f1(cp.ThresholdMs), verdict,
					interval(c.Arm(cp.A).P95Interval, notes), interval(c.Arm(cp.B).P95Interval, notes), utest(cp, notes))
			}
		}
		notes.write(m)
		m.p("")
	}
}

// inForce lists the congestion control each arm recorded across a group.
func inForce(g group) string {
	var parts []string
	var arms []string
	seen := map[string][]string{}
	for _, c := range g.cells {
		for _, a := range c.Arms {
			if _, ok := seen[a.Arm]; !ok {
				arms = append(arms, a.Arm)
				seen[a.Arm] = []string{}
			}
			for _, cc := range a.CongestionControl {
				if !contains(seen[a.Arm], cc) {
					seen[a.Arm] = append(seen[a.Arm], cc)
				}
			}
		}
	}
	for _, a := range arms {
		if len(seen[a]) > 0 {
			parts = append(parts, a+": "+strings.Join(seen[a], ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// controllerSettings lists the settings of this project's own controller
// the group's runs recorded, if any ran it.
func controllerSettings(g group) string {
	var out []string
	for _, c := range g.cells {
		for _, a := range c.Arms {
			for _, t := range a.TCPController {
				if !contains(out, t) {
					out = append(out, t)
				}
			}
		}
	}
	return strings.Join(out, "; ")
}

func groupPairs(g group) [][2]string {
	var out [][2]string
	for _, c := range g.cells {
		for _, cp := range c.Comparisons {
			p := [2]string{cp.A, cp.B}
			if !containsPair(out, p) {
				out = append(out, p)
			}
		}
	}
	return out
}
