package report

import (
	"slices"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/stats"
)

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
