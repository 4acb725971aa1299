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

// Compare reads cell b against cell a by the spread rule.
//
// Delta is b.P95 - a.P95. The threshold is max(a.Spread, b.Spread), where an
// arm's spread is the highest minus the lowest of its repeats' p95s. The
// verdict is Worse when Delta > threshold, Better when Delta < -threshold,
// and Unresolved when |Delta| <= threshold: a difference that does not
// exceed the run-to-run spread is one the bench cannot resolve.
//
// Edge cases, by definition:
//   - Equal p95s (Delta = 0) are always Unresolved, even with zero spread,
//     since |0| <= threshold holds for any threshold.
//   - Zero spread in both arms (repeats that agree to the nanosecond) makes
//     the threshold 0, so any non-zero Delta resolves. That is the rule taken
//     at face value; the U test beside it shows whether so few repeats could
//     support it.
//   - An arm with a single measured repeat has no spread to speak of (it is
//     zero by construction, not by measurement), so the verdict is
//     Unresolved with a Reason, whatever Delta is.
//   - An arm with no measured repeat is an error.
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
