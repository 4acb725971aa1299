package disttable

import "math"

// The "paretonormal" variable is X = (P + w*N) / sqrt(1 + w^2): P the
// standardized Pareto variable, N an independent standard normal, w the
// weight of the normal part.
const pnWeight = 3.0

var pnNorm = math.Sqrt(1 + pnWeight*pnWeight)

// The CDF integrates over n, the value of N, on [-pnHalfWidth, pnHalfWidth]
// (the normal mass outside is below 1e-18) with Simpson's rule of step
// pnStep.
const (
	pnHalfWidth = 9.0
	pnStep      = 0.01
)

// pnKernel[j] is exp(-(j*pnStep)^2/2) / sqrt(2*pi), enough entries for the
// whole width.
var pnKernel = func() []float64 {
	k := make([]float64, int(math.Ceil(2*pnHalfWidth/pnStep))+3)
	for j := range k {
		s := float64(j) * pnStep
		k[j] = math.Exp(-s*s/2) / math.Sqrt(2*math.Pi)
	}
	return k
}()

// paretoNormalCDF returns P(X <= x).
//
// With t = sqrt(1+w^2)*x,
//
//	F(x) = P(P + w*N <= t) = integral over n of phi(n) * F_P(t - w*n) dn,
//
// F_P the standardized Pareto CDF, which is 0 below paretoMin and
// 1 - (mean + sd*p)^-alpha above it. The integrand is 0 for n above
// n0 = (t - paretoMin)/w and has a kink there, so the integral runs over
// m = n0 - n >= 0, where mean + sd*(t - w*n) = 1 + sd*w*m and the
// integrand phi(n0 - m) * (1 - (1 + sd*w*m)^-alpha) is smooth. The
// Gaussian factor on the grid n_j = nHi - j*h is
// exp(-nHi^2/2) * exp(nHi*h)^j * exp(-(j*h)^2/2), the last factor from
// pnKernel, so no exponential is evaluated per point.
func paretoNormalCDF(x float64) float64 {
	if math.IsNaN(x) {
		return math.NaN()
	}
	n0 := (pnNorm*x - paretoMin) / pnWeight
	nHi := min(n0, pnHalfWidth)
	width := nHi + pnHalfWidth
	if !(width > 0) {
		return 0
	}
	mLo := n0 - nHi // 0 unless n0 > pnHalfWidth
	steps := int(math.Ceil(width / pnStep))
	steps += steps & 1
	cw := paretoSD * pnWeight
	g := math.Exp(-nHi * nHi / 2) // exp(-nHi^2/2) * exp(nHi*h)^j
	r := math.Exp(nHi * pnStep)
	var sum float64
	for j := 0; j <= steps; j++ {
		w := 2.0
		switch {
		case j == 0 || j == steps:
			w = 1
		case j&1 == 1:
			w = 4
		}
		m := mLo + float64(j)*pnStep
		sum += w * g * pnKernel[j] * (1 - paretoSurvival(1+cw*m))
		g *= r
	}
	return min(sum*pnStep/3, 1)
}

// paretoNormalQuantile inverts paretoNormalCDF by bisection.
func paretoNormalQuantile(u float64) float64 {
	switch {
	case u <= 0:
		return math.Inf(-1)
	case u >= 1:
		return math.Inf(1)
	}
	lo, hi := -1.0, 1.0
	for paretoNormalCDF(lo) >= u {
		lo, hi = 2*lo, lo
	}
	for paretoNormalCDF(hi) < u {
		if hi > 1<<40 {
			// The computed CDF rounds to below u everywhere.
			return math.Inf(1)
		}
		lo, hi = hi, 2*hi
	}
	// paretoNormalCDF(lo) < u <= paretoNormalCDF(hi)
	for hi-lo > 1e-13*max(1, math.Abs(lo)) {
		mid := lo + (hi-lo)/2
		if mid <= lo || mid >= hi {
			break
		}
		if paretoNormalCDF(mid) < u {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo + (hi-lo)/2
}

// cdfTable builds a table from a continuous increasing CDF without
// computing each quantile to full precision: entry i is the k in the int16
// range with F((k-0.5)/Scale) <= u_i < F((k+0.5)/Scale), that is
// round(Scale*Q(u_i)) clamped, found as the smallest k with
// F((k+0.5)/Scale) > u_i (or the top of the range if there is none).
// Each search starts from a guess extrapolated from the previous entry
// with the CDF's slope there, and gallops and bisects from the guess; most
// entries take two CDF evaluations.
func cdfTable(cdf func(float64) float64) []int16 {
	const lowest, highest = math.MinInt16, math.MaxInt16
	cache := make(map[int]float64)
	upper := func(k int) float64 { // F((k+0.5)/Scale)
		v, ok := cache[k]
		if !ok {
			v = cdf((float64(k) + 0.5) / Scale)
			cache[k] = v
		}
		return v
	}
	// first returns the smallest k in [lo, hi] with upper(k) > u, given
	// that hi is highest or upper(hi) > u.
	first := func(lo, hi int, u float64) int {
		for lo < hi {
			mid := lo + (hi-lo)/2
			if upper(mid) > u {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		return hi
	}
	// search returns the smallest k in [lo, highest] with upper(k) > u (or
	// highest), starting at guess.
	search := func(lo, guess int, u float64) int {
		guess = max(lo, min(guess, highest))
		if upper(guess) > u {
			hi := guess
			for d := 1; ; d *= 2 {
				c := hi - d
				if c < lo {
					return first(lo, hi, u)
				}
				if upper(c) <= u {
					return first(c+1, hi, u)
				}
				hi = c
			}
		}
		for d := 1; ; d *= 2 {
			c := min(guess+d, highest)
			if c == highest || upper(c) > u {
				return first(guess+1, c, u)
			}
			guess = c
		}
	}
	t := make([]int16, tableSize)
	k := first(lowest, highest, level(0))
	t[0] = int16(k)
	step := 0
	for i := 1; i < tableSize; i++ {
		if k == highest {
			t[i] = highest
			continue
		}
		u, uPrev := level(i), level(i-1)
		guess := k + step
		lower, ok := cache[k-1]
		if slope := upper(k) - lower; ok && slope > 0 {
			// y, the real-valued Scale*Q(uPrev), interpolated in
			// [k-0.5, k+0.5], then moved on by the slope.
			y := float64(k) - 0.5 + (uPrev-lower)/slope
			guess = int(math.Round(y + (u-uPrev)/slope))
		}
		next := search(k, guess, u)
		step = next - k
		k = next
		t[i] = int16(k)
	}
	return t
}
