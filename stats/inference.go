package stats

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// DefaultConfidence is the confidence level asked of MedianInterval.
const DefaultConfidence = 0.95

// Interval is a distribution-free confidence interval for a median.
type Interval struct {
	Lo time.Duration `json:"lo"`
	Hi time.Duration `json:"hi"`
	// Requested is the confidence asked for; Level is what the chosen order
	// statistics actually give, which is at least Requested when Enough.
	Requested float64 `json:"requested"`
	Level     float64 `json:"level"`
	// Enough is false when there are too few values for any pair of order
	// statistics to reach Requested; Lo and Hi are then the minimum and
	// maximum, and Level says how much confidence they carry.
	Enough bool   `json:"enough"`
	Note   string `json:"note,omitempty"`
}

// MedianInterval returns a confidence interval for the median of the
// distribution xs were drawn from, using order statistics only (the method
// benchstat uses for its medians): with the n values sorted, the interval
// [x(k), x(n+1-k)] covers the true median with probability
// 1 - 2*P(B < k), B ~ Binomial(n, 1/2), whatever the distribution, as long as
// the values are independent. The narrowest such interval whose coverage is
// at least confidence is returned.
//
// With fewer than 6 values no pair reaches 95% (five repeats give at most
// 93.75%, from the minimum and maximum): the interval is then [min, max],
// Enough is false and Note says so. xs values are nanoseconds.
func MedianInterval(xs []float64, confidence float64) Interval {
	iv := Interval{Requested: confidence}
	n := len(xs)
	if n == 0 {
		iv.Note = "no values"
		return iv
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	// cdf[k] = P(B <= k).
	best := 0
	bestLevel := 0.0
	for k := 1; 2*k <= n+1; k++ {
		level := 1 - 2*binomCDF(n, k-1)
		if level >= confidence {
			best, bestLevel = k, level
			continue
		}
		break
	}
	if best == 0 {
		iv.Lo, iv.Hi = time.Duration(s[0]), time.Duration(s[n-1])
		iv.Level = 1 - 2*binomCDF(n, 0)
		iv.Note = fmt.Sprintf("%d repeats are too few for a %.0f%% interval on the median (the range covers it with %.1f%%); at least %d are needed",
			n, 100*confidence, 100*iv.Level, minRepeatsFor(confidence))
		return iv
	}
	iv.Lo, iv.Hi = time.Duration(s[best-1]), time.Duration(s[n-best])
	iv.Level = bestLevel
	iv.Enough = true
	return iv
}

func minRepeatsFor(confidence float64) int {
	for n := 1; n < 64; n++ {
		if 1-2*binomCDF(n, 0) >= confidence {
			return n
		}
	}
	return 64
}

// binomCDF is P(B <= k) for B ~ Binomial(n, 1/2).
func binomCDF(n, k int) float64 {
	if k < 0 {
		return 0
	}
	sum := 0.0
	c := 1.0 // C(n, 0)
	for i := 0; i <= k && i <= n; i++ {
		sum += c
		c = c * float64(n-i) / float64(i+1)
	}
	return sum / math.Pow(2, float64(n))
}

// UTest is the result of a two-sided Mann-Whitney U test.
type UTest struct {
	N1 int     `json:"n1"`
	N2 int     `json:"n2"`
	U  float64 `json:"u"` // U of the first sample
	P  float64 `json:"p"` // two-sided p-value
	// Method is "exact" (all rank assignments enumerated, ties kept as
	// mid-ranks) or "normal" (tie-corrected normal approximation with
	// continuity correction, for larger samples).
	Method string `json:"method"`
	// MinP is the smallest p-value these sample sizes can produce. When it
	// is above Alpha, no outcome could be significant: Enough is false.
	MinP   float64 `json:"min_p"`
	Alpha  float64 `json:"alpha"`
	Enough bool    `json:"enough"`
	Note   string  `json:"note,omitempty"`
}

// MannWhitney runs a two-sided Mann-Whitney U test of whether a and b (for
// example the two arms' repeat p95s) come from the same distribution. It
// answers a different question from the spread rule in Compare and is
// reported beside it, never instead of it. An empty input is an error
// wrapping ErrEmpty.
func MannWhitney(a, b []float64) (UTest, error) {
	const alpha = 0.05
	n1, n2 := len(a), len(b)
	t := UTest{N1: n1, N2: n2, Alpha: alpha}
	if n1 == 0 || n2 == 0 {
		return t, fmt.Errorf("stats: Mann-Whitney needs values in both samples (got %d and %d): %w", n1, n2, ErrEmpty)
	}
	pooled := append(slices.Clone(a), b...)
	ranks := midRanks(pooled)
	r1 := 0.0
	for i := range n1 {
		r1 += ranks[i]
	}
	t.U = r1 - float64(n1*(n1+1))/2
	mean := float64(n1*n2) / 2
	obs := math.Abs(t.U - mean)

	if binom(n1+n2, n1) <= 200000 {
		t.Method = "exact"
		var extreme, total, mostExtreme float64
		var maxDev float64
		devs := make([]float64, 0, 1024)
		combos(n1+n2, n1, func(idx []int) {
			s := 0.0
			for _, i := range idx {
				s += ranks[i]
			}
			d := math.Abs(s - float64(n1*(n1+1))/2 - mean)
			devs = append(devs, d)
			if d > maxDev {
				maxDev = d
			}
		})
		for _, d := range devs {
			total++
			if d >= obs-1e-9 {
				extreme++
			}
			if d >= maxDev-1e-9 {
				mostExtreme++
			}
		}
		t.P = extreme / total
		t.MinP = mostExtreme / total
	} else {
		t.Method = "normal"
		N := float64(n1 + n2)
		tieSum := 0.0
		s := slices.Clone(pooled)
		slices.Sort(s)
		for i := 0; i < len(s); {
			j := i
			for j < len(s) && s[j] == s[i] {
				j++
			}
			tc := float64(j - i)
			tieSum += tc*tc*tc - tc
			i = j
		}
		sigma := math.Sqrt(float64(n1*n2) / 12 * ((N + 1) - tieSum/(N*(N-1))))
		if sigma == 0 {
			t.P = 1
		} else {
			z := math.Max(obs-0.5, 0) / sigma
			t.P = math.Erfc(z / math.Sqrt2)
		}
		t.MinP = 2 / binom(n1+n2, n1)
	}
	t.P = math.Min(t.P, 1)
	t.Enough = t.MinP <= alpha
	if !t.Enough {
		t.Note = fmt.Sprintf("%d against %d values cannot reach p <= %.2f (smallest possible p is %.3f)", n1, n2, alpha, t.MinP)
	}
	return t, nil
}

// midRanks gives each value its 1-based rank in xs, tied values sharing the
// mean of the ranks they span.
func midRanks(xs []float64) []float64 {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(i, j int) int {
		switch {
		case xs[i] < xs[j]:
			return -1
		case xs[i] > xs[j]:
			return 1
		}
		return 0
	})
	ranks := make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && xs[idx[j]] == xs[idx[i]] {
			j++
		}
		r := float64(i+j+1) / 2 // mean of ranks i+1 .. j
		for k := i; k < j; k++ {
			ranks[idx[k]] = r
		}
		i = j
	}
	return ranks
}

func binom(n, k int) float64 {
	c := 1.0
	for i := range k {
		c = c * float64(n-i) / float64(i+1)
	}
	return math.Round(c)
}

// combos calls f with every k-subset of 0..n-1 (the slice is reused).
func combos(n, k int, f func([]int)) {
	idx := make([]int, k)
	var rec func(start, depth int)
	rec = func(start, depth int) {
		if depth == k {
			f(idx)
			return
		}
		for i := start; i <= n-(k-depth); i++ {
			idx[depth] = i
			rec(i+1, depth+1)
		}
	}
	rec(0, 0)
}
