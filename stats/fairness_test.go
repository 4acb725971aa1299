package stats

import (
	"math"
	"testing"
)

// jainProblems checks a Jain's-index function against values worked by
// hand and input it must refuse, and returns what it got wrong.
func jainProblems(jain func([]float64) (float64, error)) []string {
	var out []string
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{[]float64{1, 1, 1, 1}, 1},              // an even share
		{[]float64{5, 0, 0, 0}, 0.25},           // one takes all: 1/n
		{[]float64{9, 0}, 0.5},                  // one takes all: 1/n
		{[]float64{3, 1}, 0.8},                  // 16 / (2 * 10)
		{[]float64{1, 2, 3}, 36.0 / 42.0},       // 36 / (3 * 14)
		{[]float64{2.5, 2.5, 5}, 100.0 / 112.5}, // 100 / (3 * 37.5)
		{[]float64{0.5, 1.5, 2}, 16.0 / 19.5},   // 16 / (3 * 6.5)
		{[]float64{7}, 1},                       // alone is fair
	} {
		got, err := jain(tc.xs)
		if err != nil || math.Abs(got-tc.want) > 1e-9 {
			out = append(out, "values")
		}
	}
	for _, bad := range [][]float64{nil, {}, {1, -1}, {0, 0}, {math.NaN(), 1}, {math.Inf(1), 1}} {
		if _, err := jain(bad); err == nil {
			out = append(out, "accepted bad input")
		}
	}
	return out
}

func TestJainIndex(t *testing.T) {
	if p := jainProblems(JainIndex); len(p) > 0 {
		t.Errorf("JainIndex: %v", p)
	}
	// The cases must catch plausible mistakes, or they prove nothing.
	guard := func(f func(sum, sumSq, n float64) float64) func([]float64) (float64, error) {
		return func(xs []float64) (float64, error) {
			if _, err := JainIndex(xs); err != nil {
				return 0, err
			}
			var sum, sumSq float64
			for _, x := range xs {
				sum += x
				sumSq += x * x
			}
			return f(sum, sumSq, float64(len(xs))), nil
		}
	}
	broken := map[string]func([]float64) (float64, error){
		"squares swapped": guard(func(s, q, n float64) float64 { return q / (n * s * s) }),
		"sum not squared": guard(func(s, q, n float64) float64 { return s / (n * q) }),
		"no n":            guard(func(s, q, n float64) float64 { return s * s / q }),
		"n squared":       guard(func(s, q, n float64) float64 { return s * s / (n * n * q) }),
		"inverted":        guard(func(s, q, n float64) float64 { return n * q / (s * s) }),
		"no error on bad input": func(xs []float64) (float64, error) {
			j, err := JainIndex(xs)
			if err != nil {
				return 0, nil
			}
			return j, nil
		},
	}
	for name, f := range broken {
		if len(jainProblems(f)) == 0 {
			t.Errorf("the cases do not catch a Jain's index with %s", name)
		}
	}
}
