package disttable

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The constants below are written out again here, not taken from the
// package, so that a wrong constant in the package fails a test.
const (
	testScale = 8192
	sqrt3     = 1.7320508075688772
)

func mustTable(t *testing.T, name string) []int16 {
	t.Helper()
	tb, err := Table(name)
	if err != nil {
		t.Fatal(err)
	}
	if len(tb) != tableSize || tableSize != 4096 || Scale != testScale {
		t.Fatalf("%s: %d entries, tableSize %d, Scale %d; want 4096, 4096, 8192", name, len(tb), tableSize, Scale)
	}
	return tb
}

func mustQuantile(t *testing.T, name string, u float64) float64 {
	t.Helper()
	q, err := quantile(name, u)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// entry is the definition of a table entry, written independently of
// toEntry.
func entry(q float64) int16 {
	v := math.Round(testScale * q)
	switch {
	case v > 32767:
		return 32767
	case v < -32768:
		return -32768
	}
	return int16(v)
}

func TestNames(t *testing.T) {
	want := []string{"normal", "pareto", "paretonormal"}
	got := Names()
	if !slices.Equal(got, want) {
		t.Fatalf("Names() = %q, want %q", got, want)
	}
	got[0] = "changed"
	if Names()[0] != "normal" {
		t.Error("Names returns a slice shared with the package")
	}
}

func TestUnknownName(t *testing.T) {
	const want = `disttable: unknown distribution "x"; the distributions are normal, pareto and paretonormal`
	if _, err := Table("x"); err == nil || err.Error() != want {
		t.Errorf("Table(x) error %v, want %s", err, want)
	}
	if _, err := quantile("x", 0.5); err == nil || err.Error() != want {
		t.Errorf("quantile(x) error %v, want %s", err, want)
	}
}

func TestQuantileDomain(t *testing.T) {
	for _, name := range Names() {
		for _, u := range []float64{-0.001, 1.001, math.NaN(), math.Inf(1)} {
			if _, err := quantile(name, u); err == nil {
				t.Errorf("quantile(%s, %v): no error", name, u)
			}
		}
		if q := mustQuantile(t, name, 1); !math.IsInf(q, 1) {
			t.Errorf("quantile(%s, 1) = %v, want +Inf", name, q)
		}
	}
	if q := mustQuantile(t, "normal", 0); !math.IsInf(q, -1) {
		t.Errorf("quantile(normal, 0) = %v, want -Inf", q)
	}
	if q := mustQuantile(t, "paretonormal", 0); !math.IsInf(q, -1) {
		t.Errorf("quantile(paretonormal, 0) = %v, want -Inf", q)
	}
	if q := mustQuantile(t, "pareto", 0); math.Abs(q+1/sqrt3) > 1e-12 {
		t.Errorf("quantile(pareto, 0) = %v, want -1/sqrt(3)", q)
	}
}

func TestTableIsACopy(t *testing.T) {
	for _, name := range Names() {
		a := mustTable(t, name)
		want := slices.Clone(a)
		for i := range a {
			a[i] = 1
		}
		if b := mustTable(t, name); !slices.Equal(b, want) {
			t.Errorf("%s: modifying a returned table changed the next one", name)
		}
	}
}

func TestNormalSymmetric(t *testing.T) {
	tb := mustTable(t, "normal")
	for i := range tableSize / 2 {
		if d := int(tb[i]) + int(tb[tableSize-1-i]); d < -1 || d > 1 {
			t.Fatalf("normal: t[%d] = %d, t[%d] = %d, not symmetric", i, tb[i], tableSize-1-i, tb[tableSize-1-i])
		}
	}
}

func TestMonotone(t *testing.T) {
	for _, name := range Names() {
		tb := mustTable(t, name)
		for i := 1; i < tableSize; i++ {
			if tb[i] < tb[i-1] {
				t.Errorf("%s: t[%d] = %d < t[%d] = %d", name, i, tb[i], i-1, tb[i-1])
				break
			}
		}
	}
}

// Every entry is clamp(round(8192 * quantile((i+0.5)/4096))). For
// paretonormal, whose table is found by a search on the integer grid and
// whose quantile is a bisection, a sample of the entries.
func TestTableMatchesQuantile(t *testing.T) {
	for _, name := range Names() {
		tb := mustTable(t, name)
		for i := range tableSize {
			if name == "paretonormal" && i%4 != 0 && i < tableSize-16 {
				continue
			}
			q := mustQuantile(t, name, (float64(i)+0.5)/4096)
			if want := entry(q); tb[i] != want {
				t.Errorf("%s: t[%d] = %d, want %d (quantile %v)", name, i, tb[i], want, q)
			}
		}
	}
}

func TestNormalQuantiles(t *testing.T) {
	for _, c := range []struct{ u, q, tol float64 }{
		{0.975, 1.95996, 1e-4},
		{0.975, 1.959963984540054, 1e-9},
		{0.5, 0, 1e-12},
		{0.8413447460685429, 1, 1e-9}, // Phi(1)
		{0.001, -3.090232306167813, 1e-9},
	} {
		if q := mustQuantile(t, "normal", c.u); math.Abs(q-c.q) > c.tol {
			t.Errorf("quantile(normal, %v) = %v, want %v within %v", c.u, q, c.q, c.tol)
		}
	}
	// The level 0.975 falls at the fractional index 0.975*4096 - 0.5 =
	// 3993.1, between two entries 34 units apart; interpolate.
	tb := mustTable(t, "normal")
	f := 0.975*4096 - 0.5
	i := int(f)
	got := float64(tb[i]) + (f-float64(i))*float64(tb[i+1]-tb[i])
	if want := math.Round(testScale * 1.95996); math.Abs(got-want) > 2 {
		t.Errorf("normal table at level 0.975 (t[%d] = %d, t[%d] = %d) interpolates to %.1f, want %v within 2",
			i, tb[i], i+1, tb[i+1], got, want)
	}
}

func TestNormalMoments(t *testing.T) {
	tb := mustTable(t, "normal")
	mean, sd := moments(tb)
	if math.Abs(mean) > 1e-3 || math.Abs(sd-1) > 0.01 {
		t.Errorf("normal table: moments gives mean %v sd %v, want 0 and 1 within 1%%", mean, sd)
	}
	// The same from the raw entries and netem's scale, 8192.
	var ss float64
	for _, v := range tb {
		ss += float64(v) * float64(v)
	}
	if sd := math.Sqrt(ss/tableSize) / testScale; math.Abs(sd-1) > 0.01 {
		t.Errorf("normal table: entries/8192 have sd %v, want 1 within 1%%", sd)
	}
}

func TestMoments(t *testing.T) {
	mean, sd := moments([]int16{-testScale, testScale, -testScale, testScale})
	if mean != 0 || sd != 1 {
		t.Errorf("moments(+-Scale) = %v, %v, want 0, 1", mean, sd)
	}
	mean, sd = moments([]int16{testScale / 2, testScale / 2, 3 * testScale / 2})
	if math.Abs(mean-5.0/6) > 1e-15 || math.Abs(sd-math.Sqrt(2)/3) > 1e-15 {
		t.Errorf("moments(0.5, 0.5, 1.5) = %v, %v, want 5/6, sqrt(2)/3", mean, sd)
	}
	if mean, sd := moments(nil); !math.IsNaN(mean) || !math.IsNaN(sd) {
		t.Errorf("moments(nil) = %v, %v, want NaN, NaN", mean, sd)
	}
}

// Before rounding and clamping, the quantiles at the table's levels have
// mean about 0 and standard deviation about 1 (less than 1 for the pareto,
// whose tail beyond the last level carries much of its variance).
func TestStandardized(t *testing.T) {
	for _, c := range []struct {
		name       string
		sdLo, sdHi float64
	}{
		{"normal", 0.999, 1},
		{"pareto", 0.9, 1},
		{"paretonormal", 0.99, 1},
	} {
		var sum, ss float64
		for i := range tableSize {
			q := mustQuantile(t, c.name, (float64(i)+0.5)/4096)
			sum += q
			ss += q * q
		}
		mean := sum / tableSize
		sd := math.Sqrt(ss/tableSize - mean*mean)
		if math.Abs(mean) > 0.002 || sd < c.sdLo || sd > c.sdHi {
			t.Errorf("%s: unclamped quantiles have mean %.5f sd %.5f, want |mean| <= 0.002, sd in [%v, %v]",
				c.name, mean, sd, c.sdLo, c.sdHi)
		}
	}
}

func TestPareto(t *testing.T) {
	// The Pareto variable y = (1-u)^(-1/3) standardized as
	// (y - 1.5)/(sqrt(3)/2): y = 2 at u = 7/8, y = 3 at u = 26/27.
	for _, c := range []struct{ u, q float64 }{
		{7.0 / 8, 1 / sqrt3},
		{26.0 / 27, sqrt3},
		{0.5, (math.Cbrt(2) - 1.5) / (sqrt3 / 2)},
	} {
		if q := mustQuantile(t, "pareto", c.u); math.Abs(q-c.q) > 1e-12 {
			t.Errorf("quantile(pareto, %v) = %v, want %v", c.u, q, c.q)
		}
	}
	tb := mustTable(t, "pareto")
	// Right-skewed: the median is below the mean (0), the bottom is
	// -1/sqrt(3), and the top is clamped.
	if tb[tableSize/2] >= 0 {
		t.Errorf("pareto median entry %d, want negative", tb[tableSize/2])
	}
	if lo := math.Round(-testScale / sqrt3); float64(tb[0]) < lo {
		t.Errorf("pareto t[0] = %d, below the minimum %v", tb[0], lo)
	}
	// 8192*Q(u) >= 32766.5 for 1-u <= (1.5 + 32766.5/8192*sqrt(3)/2)^-3,
	// that is for the top 33 levels.
	for i := tableSize - 33; i < tableSize; i++ {
		if tb[i] != 32767 {
			t.Errorf("pareto t[%d] = %d, want clamped to 32767", i, tb[i])
		}
	}
	if tb[tableSize-34] == 32767 {
		t.Errorf("pareto t[%d] is clamped, want only the top 33", tableSize-34)
	}
}

// refParetoNormalCDF is an independent, slow evaluation of the
// paretonormal CDF: Simpson's rule in n over [-12, n0] with a direct
// exp and pow at every point.
func refParetoNormalCDF(x float64) float64 {
	const h = 0.0005
	t := math.Sqrt(10) * x
	n0 := (t + 1/sqrt3) / 3 // F_P(t - 3n) = 0 for n > n0
	lo, hi := -12.0, min(n0, 12)
	if hi <= lo {
		return 0
	}
	steps := int(math.Ceil((hi - lo) / h))
	steps += steps % 2
	step := (hi - lo) / float64(steps)
	var sum float64
	for j := 0; j <= steps; j++ {
		n := lo + float64(j)*step
		w := 2.0
		switch {
		case j == 0 || j == steps:
			w = 1
		case j%2 == 1:
			w = 4
		}
		y := 1.5 + sqrt3/2*(t-3*n) // the Pareto variable, >= 1
		sum += w * math.Exp(-n*n/2) / math.Sqrt(2*math.Pi) * (1 - math.Pow(y, -3))
	}
	return sum * step / 3
}

func TestParetoNormalCDFAccuracy(t *testing.T) {
	worst, at := 0.0, 0.0
	for x := -5.0; x <= 12; x += 0.0173 {
		if d := math.Abs(paretoNormalCDF(x) - refParetoNormalCDF(x)); d > worst {
			worst, at = d, x
		}
	}
	if worst > 1e-7 {
		t.Errorf("paretonormal CDF is %.3g from the reference at x = %.4f, want within 1e-7", worst, at)
	}
	if f := paretoNormalCDF(-9); f != 0 {
		t.Errorf("F(-9) = %v, want 0", f)
	}
	if f := paretoNormalCDF(math.Inf(1)); math.Abs(f-1) > 1e-12 {
		t.Errorf("F(+Inf) = %v, want 1", f)
	}
}

// The paretonormal CDF against the empirical CDF of 200000 independent
// samples of (P + 3N)/sqrt(10), P drawn by inverse transform.
func TestParetoNormalMonteCarlo(t *testing.T) {
	const n = 200000
	rng := rand.New(rand.NewPCG(1, 2))
	xs := make([]float64, n)
	for i := range xs {
		y := math.Pow(1-rng.Float64(), -1.0/3) // Pareto, shape 3, x_m 1
		p := (y - 1.5) / (sqrt3 / 2)
		xs[i] = (p + 3*rng.NormFloat64()) / math.Sqrt(10)
	}
	slices.Sort(xs)
	// The Kolmogorov-Smirnov distance, evaluated at every 20th sample
	// (the empirical CDF moves by 20/n = 1e-4 between them).
	var ks float64
	for i := 0; i < n; i += 20 {
		f := paretoNormalCDF(xs[i])
		ks = max(ks, math.Abs(f-float64(i)/n), math.Abs(f-float64(i+1)/n))
	}
	if ks >= 0.01 {
		t.Errorf("Kolmogorov-Smirnov distance %.4f, want below 0.01", ks)
	}
	t.Logf("Kolmogorov-Smirnov distance %.5f", ks)
}

func TestParetoNormalRoundTrip(t *testing.T) {
	for x := -4.0; x <= 6; x += 0.37 {
		f := paretoNormalCDF(x)
		q := mustQuantile(t, "paretonormal", f)
		if math.Abs(q-x) > 1e-9 {
			t.Errorf("quantile(F(%v)) = %v", x, q)
		}
	}
	for _, u := range []float64{1e-9, 0.001, 0.1, 0.5, 0.9, 0.999, 1 - 1e-9} {
		q := mustQuantile(t, "paretonormal", u)
		if f := paretoNormalCDF(q); math.Abs(f-u) > 1e-12 {
			t.Errorf("F(quantile(%v)) = %v", u, f)
		}
	}
}

// quantile returns the inverse CDF at u of the named distribution,
// standardized to mean 0 and standard deviation 1, and not clamped: the
// number that Table scales by Scale, rounds and clamps. u must be in
// [0, 1]; the ends give the distribution's infimum and supremum (-Inf and
// +Inf, except that "pareto" is bounded below by -1/sqrt(3)).
func quantile(name string, u float64) (float64, error) {
	d, ok := dists[name]
	if !ok {
		return 0, unknown(name)
	}
	if !(u >= 0 && u <= 1) {
		return 0, fmt.Errorf("disttable: quantile level %v is outside [0, 1]", u)
	}
	return d.quantile(u), nil
}

// moments returns the mean and the (population) standard deviation of the
// entries of t in units of one standard deviation (entry/Scale): what a
// netem delay "mu sigma distribution t" really delivers is mean
// mu + sigma*mean and standard deviation sigma*sd, before netem's rounding
// to the nanosecond. An empty table gives NaN, NaN.
func moments(t []int16) (mean, sd float64) {
	if len(t) == 0 {
		return math.NaN(), math.NaN()
	}
	n := float64(len(t))
	var sum float64
	for _, v := range t {
		sum += float64(v)
	}
	m := sum / n
	var ss float64
	for _, v := range t {
		d := float64(v) - m
		ss += d * d
	}
	return m / Scale, math.Sqrt(ss/n) / Scale
}
