package report

import (
	"fmt"
	"slices"

	"github.com/shakenfist/quicbench/gsocheck"
	"github.com/shakenfist/quicbench/measure/results"
)

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
