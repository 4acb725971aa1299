package report

import (
	"slices"
	"testing"

	"github.com/shakenfist/quicbench/measure/results"
)

// TestCellsGroupByProfileOptions: cells that differ only in the
// profile's options (a queue discipline, a loss model) sort together, so
// each table title is one run of rows, and the plain profile comes first.
func TestCellsGroupByProfileOptions(t *testing.T) {
	cell := func(profile string, loss float64) results.Cell {
		return results.Cell{Profile: profile, RTTms: 80, RateMbit: 10, LossPct: loss, CC: "reno"}
	}
	cells := []results.Cell{
		cell("80:10,qdisc=fq_codel", 1), cell("80:10", 1), cell("80:10,qdisc=codel", 0),
		cell("80:10,qdisc=fq_codel", 0), cell("80:10", 0), cell("80:10,qdisc=codel", 1),
	}
	slices.SortFunc(cells, compareCells)
	var got []string
	for _, c := range cells {
		got = append(got, c.Title())
	}
	want := []string{"80 ms / 10 Mbit", "80 ms / 10 Mbit", "80 ms / 10 Mbit, qdisc=codel", "80 ms / 10 Mbit, qdisc=codel",
		"80 ms / 10 Mbit, qdisc=fq_codel", "80 ms / 10 Mbit, qdisc=fq_codel"}
	if !slices.Equal(got, want) || cells[0].LossPct != 0 || cells[1].LossPct != 1 {
		t.Errorf("order %v, want %v with loss rising within each", got, want)
	}
}
