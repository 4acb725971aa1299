package stats

import (
	"math"
	"slices"
	"strings"
	"testing"
)

// pilot returns three values per arm with medians 0 and delta and a pooled
// SD of 1.
func pilot(delta float64) (a, b []float64) {
	return []float64{-1, 0, 1}, []float64{delta - 1, delta, delta + 1}
}

func TestEstimateRepeatsHugeDeltaResolvesAtThree(t *testing.T) {
	a, b := pilot(100)
	e, err := EstimateRepeats(a, b, RepeatsOptions{Cap: 10, Trials: 500})
	if err != nil {
		t.Fatal(err)
	}
	if e.Delta != 100 || e.SD != 1 {
		t.Errorf("pilot read as delta %v, SD %v; want 100 and 1", e.Delta, e.SD)
	}
	// Three against three cannot reach p < 0.05 (smallest p 0.1); four can.
	if e.SpreadN != 3 || e.UN != 4 {
		t.Errorf("a 100-SD delta: spread rule at n=%d, U test at n=%d; want 3 and 4", e.SpreadN, e.UN)
	}
	if s, u, _ := e.At(3); s != 1 || u != 0 {
		t.Errorf("at n=3: spread %v, U %v; want 1 and 0", s, u)
	}
}

func TestEstimateRepeatsZeroDeltaNeverResolves(t *testing.T) {
	a, b := pilot(0)
	e, err := EstimateRepeats(a, b, RepeatsOptions{Cap: 30, Trials: 500, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if e.SpreadN != 0 || e.UN != 0 {
		t.Errorf("no delta: spread rule at n=%d, U test at n=%d; want 0 and 0 (not within the cap)", e.SpreadN, e.UN)
	}
	if len(e.Spread) != 28 || len(e.U) != 28 {
		t.Fatalf("%d and %d probabilities for n = 3..30; want 28", len(e.Spread), len(e.U))
	}
	// The U test's false-positive rate is about 0.05 once it can reach
	// that p at all; the spread rule almost never resolves.
	for i := range e.U {
		if e.U[i] > 0.1 || e.Spread[i] > 0.1 {
			t.Errorf("no delta, n=%d: spread %v, U %v resolve; want at most 0.1", i+3, e.Spread[i], e.U[i])
		}
	}
	// Identical values in both arms: no spread and no delta.
	e, err = EstimateRepeats([]float64{5, 5, 5}, []float64{5, 5, 5}, RepeatsOptions{Cap: 5})
	if err != nil {
		t.Fatal(err)
	}
	if e.SpreadN != 0 || e.UN != 0 || slices.Max(e.Spread) != 0 || slices.Max(e.U) != 0 {
		t.Errorf("identical arms resolve: %+v", e)
	}
}

func TestEstimateRepeatsSpreadRuleCanGetWorseWithN(t *testing.T) {
	a, b := pilot(2.5)
	e, err := EstimateRepeats(a, b, RepeatsOptions{Cap: 20, Trials: 4000, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	s3, _, _ := e.At(3)
	s20, u20, _ := e.At(20)
	if !(s20 < s3-0.1) || u20 < 0.99 {
		t.Errorf("a 2.5-SD delta: spread rule %v at n=3 and %v at n=20, U test %v at n=20; want the spread rule to fall and the U test to resolve", s3, s20, u20)
	}
}

// spreadProbN3 is the probability that the spread rule resolves n=3
// values of N(0,1) against n=3 of N(delta,1), computed directly from the
// joint density of the median m and range r of three standard normals,
// f(m, r) = 6 φ(m) ∫ φ(x) φ(x+r) dx over x in (m-r, m), by the midpoint
// rule.
func spreadProbN3(delta float64) float64 {
	const h = 0.05
	phi := func(x float64) float64 { return math.Exp(-x*x/2) / math.Sqrt(2*math.Pi) }
	var ms, rs []float64
	for m := -5 + h/2; m < 5; m += h {
		ms = append(ms, m)
	}
	for r := h / 2; r < 7; r += h {
		rs = append(rs, r)
	}
	f := make([][]float64, len(rs)) // f[r][m] * h * h
	for i, r := range rs {
		f[i] = make([]float64, len(ms))
		for j, m := range ms {
			const k = 40
			s := 0.0
			for q := range k {
				x := m - r + (float64(q)+0.5)*r/k
				s += phi(x) * phi(x+r)
			}
			f[i][j] = 6 * phi(m) * s * r / k * h * h
		}
	}
	p := 0.0
	for ia := range rs {
		for ib := range rs {
			w := max(rs[ia], rs[ib])
			for ja, ma := range ms {
				if f[ia][ja] < 1e-12 {
					continue
				}
				for jb, mb := range ms {
					if math.Abs(mb+delta-ma) > w {
						p += f[ia][ja] * f[ib][jb]
					}
				}
			}
		}
	}
	return p
}

func TestEstimateRepeatsSpreadRuleMatchesTheRangeDistribution(t *testing.T) {
	const trials = 20000
	for _, delta := range []float64{1.5, 3} {
		a, b := pilot(delta)
		e, err := EstimateRepeats(a, b, RepeatsOptions{Cap: 3, Trials: trials, Seed: 11})
		if err != nil {
			t.Fatal(err)
		}
		want := spreadProbN3(delta)
		got := e.Spread[0]
		se := math.Sqrt(want * (1 - want) / trials)
		if math.Abs(got-want) > 4*se+0.005 {
			t.Errorf("delta %v SD, n=3: simulated %v, direct %v (4 standard errors %v)", delta, got, want, 4*se)
		}
	}
}

func TestEstimateRepeatsIsSeeded(t *testing.T) {
	a, b := []float64{10, 12, 15, 11}, []float64{14, 18, 16}
	opt := RepeatsOptions{Cap: 12, Trials: 300, Seed: 42}
	e1, _ := EstimateRepeats(a, b, opt)
	e2, _ := EstimateRepeats(a, b, opt)
	if !slices.Equal(e1.Spread, e2.Spread) || !slices.Equal(e1.U, e2.U) {
		t.Error("the same seed gave different estimates")
	}
	opt.Seed++
	e3, _ := EstimateRepeats(a, b, opt)
	if slices.Equal(e1.Spread, e3.Spread) && slices.Equal(e1.U, e3.U) {
		t.Error("another seed gave the same estimate")
	}
}

func TestEstimateRepeatsBadInput(t *testing.T) {
	a, b := pilot(1)
	for name, tc := range map[string]struct {
		a, b []float64
		opt  RepeatsOptions
		want string
	}{
		"short pilot": {a[:2], b, RepeatsOptions{}, "at least 3 pilot repeats"},
		"NaN":         {[]float64{1, math.NaN(), 2}, b, RepeatsOptions{}, "finite"},
		"small cap":   {a, b, RepeatsOptions{Cap: 2}, "cap 2"},
		"no trials":   {a, b, RepeatsOptions{Trials: -1}, "trials"},
		"power":       {a, b, RepeatsOptions{Power: 1.5}, "power"},
	} {
		if _, err := EstimateRepeats(tc.a, tc.b, tc.opt); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v; want an error saying %q", name, err, tc.want)
		}
	}
}
