package stats

import (
	"fmt"
	"time"
)

// Verdict is what Compare concludes about the second arm relative to the
// first. Lower round trips are better.
type Verdict string

const (
	// Better: the second arm's p95 is lower by more than the threshold.
	Better Verdict = "better"
	// Worse: the second arm's p95 is higher by more than the threshold.
	Worse Verdict = "worse"
	// Unresolved: the difference does not exceed the run-to-run spread, or
	// there were too few repeats to know the spread.
	Unresolved Verdict = "unresolved"
)

// Comparison is the reading of one cell: arm B against arm A.
type Comparison struct {
	// Delta is B's median p95 minus A's: positive means B is slower.
	Delta time.Duration `json:"delta"`
	// Threshold is the wider of the two arms' p95 spreads.
	Threshold time.Duration `json:"threshold"`
	Verdict   Verdict       `json:"verdict"`
	// Reason explains an Unresolved verdict.
	Reason string `json:"reason,omitempty"`
	// U is a Mann-Whitney U test between the arms' repeat p95s, reported
	// beside the spread rule and never replacing it.
	U UTest `json:"u_test"`
}

// Compare reads cell b against cell a by the spread rule: Delta is
// b.P95 - a.P95 and the threshold max(a.Spread, b.Spread), an arm's spread
// being the highest minus the lowest of its repeats' p95s. The verdict is
// Worse when Delta > threshold, Better when Delta < -threshold, else
// Unresolved; so Delta 0 is always Unresolved, and zero spread in both
// arms resolves any other Delta. An arm with one measured repeat gives
// Unresolved with a Reason; an arm with none is an error.
// docs/statistics.md has the rule's edges.
func Compare(a, b Cell) (Comparison, error) {
	if a.Measured == 0 || b.Measured == 0 {
		return Comparison{}, fmt.Errorf("stats: cannot compare: %d and %d measured repeats; every arm needs at least one", a.Measured, b.Measured)
	}
	c := Comparison{
		Delta:     b.P95 - a.P95,
		Threshold: max(a.Spread, b.Spread),
	}
	switch {
	case a.Measured < 2 || b.Measured < 2:
		c.Verdict = Unresolved
		c.Reason = fmt.Sprintf("a spread needs at least 2 repeats per arm (have %d and %d)", a.Measured, b.Measured)
	case c.Delta > c.Threshold:
		c.Verdict = Worse
	case c.Delta < -c.Threshold:
		c.Verdict = Better
	default:
		c.Verdict = Unresolved
		c.Reason = fmt.Sprintf("|delta| %v does not exceed the threshold %v", c.Delta.Abs(), c.Threshold)
	}
	u, err := MannWhitney(durationsToFloats(a.RepeatP95s()), durationsToFloats(b.RepeatP95s()))
	if err != nil {
		return c, err
	}
	c.U = u
	return c, nil
}

func durationsToFloats(ds []time.Duration) []float64 {
	out := make([]float64, len(ds))
	for i, d := range ds {
		out[i] = float64(d)
	}
	return out
}
