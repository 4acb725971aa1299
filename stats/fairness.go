package stats

import (
	"errors"
	"fmt"
	"math"
)

// JainIndex is Jain's fairness index of the shares xs, (Σx)² / (n·Σx²):
// 1 when every share is equal, 1/n when one takes everything. It is an
// error to pass no shares, a negative or non-finite one, or shares that
// are all zero (nothing was shared, so fairness is undefined).
func JainIndex(xs []float64) (float64, error) {
	if len(xs) == 0 {
		return 0, errors.New("stats: Jain's index of no shares")
	}
	var sum, sumSq float64
	for _, x := range xs {
		if x < 0 || math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, fmt.Errorf("stats: Jain's index needs finite shares of zero or more, got %v", x)
		}
		sum += x
		sumSq += x * x
	}
	if sumSq == 0 {
		return 0, errors.New("stats: Jain's index of shares that are all zero is undefined")
	}
	return sum * sum / (float64(len(xs)) * sumSq), nil
}
