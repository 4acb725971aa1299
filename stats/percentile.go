package stats

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// ErrEmpty is returned when a statistic is asked of an empty sample.
var ErrEmpty = errors.New("stats: empty sample")

// Percentile returns the p-th percentile of xs by the nearest-rank method:
// with the n values sorted ascending as x(1) <= ... <= x(n), it is x(r) where
// r = ceil(p/100 * n), and r = 1 when that product is 0. The result is
// always one of the observed values (no interpolation), so p100 is the
// maximum and, for n = 20, p95 is the 19th smallest value.
//
// p must lie in [0, 100]; xs is not modified. An empty xs returns ErrEmpty.
func Percentile[T cmp.Ordered](xs []T, p float64) (T, error) {
	var zero T
	if len(xs) == 0 {
		return zero, ErrEmpty
	}
	if math.IsNaN(p) || p < 0 || p > 100 {
		return zero, fmt.Errorf("stats: percentile %v is outside [0, 100]", p)
	}
	sorted := slices.Clone(xs)
	slices.Sort(sorted)
	return sorted[nearestRank(len(sorted), p)-1], nil
}

// nearestRank is the 1-based rank of the p-th percentile of n sorted values.
func nearestRank(n int, p float64) int {
	// The small epsilon keeps p*n/100 from landing just above an integer
	// through floating-point error (95 * 20 / 100 must be 19, not 19.000001).
	r := int(math.Ceil(p*float64(n)/100 - 1e-9))
	return min(max(r, 1), n)
}

// Quantiles holds the three percentiles every summary here reports.
type Quantiles[T cmp.Ordered] struct {
	P50, P95, P99 T
}

// P50, P95 and P99 are Percentile at 50, 95 and 99.
func P50[T cmp.Ordered](xs []T) (T, error) { return Percentile(xs, 50) }

// P95 is Percentile(xs, 95).
func P95[T cmp.Ordered](xs []T) (T, error) { return Percentile(xs, 95) }

// P99 is Percentile(xs, 99).
func P99[T cmp.Ordered](xs []T) (T, error) { return Percentile(xs, 99) }

// percentiles computes p50, p95 and p99 with one sort.
func percentiles[T cmp.Ordered](xs []T) (Quantiles[T], error) {
	if len(xs) == 0 {
		return Quantiles[T]{}, ErrEmpty
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	return Quantiles[T]{
		P50: s[nearestRank(n, 50)-1],
		P95: s[nearestRank(n, 95)-1],
		P99: s[nearestRank(n, 99)-1],
	}, nil
}

// Median returns the middle value of xs, or the mean of the two middle values
// when len(xs) is even. It is used across repeats, never within one.
func Median(xs []float64) (float64, error) {
	if len(xs) == 0 {
		return 0, ErrEmpty
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2], nil
	}
	return (s[n/2-1] + s[n/2]) / 2, nil
}
