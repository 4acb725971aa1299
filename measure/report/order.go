package report

import (
	"cmp"
	"slices"
	"strings"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
)

// armRank orders arms as the tables show them: the registered arms in the
// order they were registered (measure.ArmNames, the built-in ones first),
// then any this process has not registered (an archived run's), which
// share the last rank and sort by name.
func armRank(arm string) int {
	names := measure.ArmNames()
	if i := slices.Index(names, arm); i >= 0 {
		return i
	}
	return len(names)
}

func compareArms(a, b string) int {
	if c := cmp.Compare(armRank(a), armRank(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// compareCells orders the headline before sensitivity cells, then by
// congestion control (reno first), profile, the matrix's own axes and
// loss.
func compareCells(a, b results.Cell) int {
	if a.Sensitivity != b.Sensitivity {
		if !a.Sensitivity {
			return -1
		}
		return 1
	}
	if a.CC != b.CC {
		switch {
		case a.CC == "reno":
			return -1
		case b.CC == "reno":
			return 1
		}
		return strings.Compare(a.CC, b.CC)
	}
	if c := cmp.Compare(a.RTTms, b.RTTms); c != 0 {
		return c
	}
	if c := cmp.Compare(b.RateMbit, a.RateMbit); c != 0 {
		return c
	}
	// Sessions and cap before loss, so cells that share a table title
	// (CellTitle) are adjacent.
	if c := cmp.Compare(a.Sessions, b.Sessions); c != 0 {
		return c
	}
	if c := cmp.Compare(a.BulkCapFraction, b.BulkCapFraction); c != 0 {
		return c
	}
	// The profile's options too (a queue discipline, a loss model), for
	// the same reason.
	if c := strings.Compare(results.ProfileOptions(a.Profile), results.ProfileOptions(b.Profile)); c != 0 {
		return c
	}
	// And the matrix's own axes, which the title names too.
	if c := results.CompareAxes(a, b); c != 0 {
		return c
	}
	return cmp.Compare(a.LossPct, b.LossPct)
}

func compareProfiles(a, b results.Cell, la, lb float64) int {
	if c := cmp.Compare(a.RTTms, b.RTTms); c != 0 {
		return c
	}
	if c := cmp.Compare(b.RateMbit, a.RateMbit); c != 0 {
		return c
	}
	return cmp.Compare(la, lb)
}

// SortArms sorts arms into the order the tables list them (compareArms).
func SortArms(arms []string) {
	for i := 1; i < len(arms); i++ {
		for j := i; j > 0 && compareArms(arms[j-1], arms[j]) > 0; j-- {
			arms[j-1], arms[j] = arms[j], arms[j-1]
		}
	}
}
