package disttable

import (
	"fmt"
	"math"
	"slices"
	"sync"
)

// Scale is the fixed-point scale of a table entry: an entry of Scale is one
// standard deviation (netem's NETEM_DIST_SCALE).
const Scale = 8192

// Size is the number of entries in every table.
const Size = 4096

// The Pareto distribution behind "pareto" and "paretonormal": shape
// paretoAlpha, scale x_m = 1. paretoAlpha must be an integer greater than 2
// (an integer so that the CDF's power is a few multiplications; greater
// than 2 so that the variance is finite).
const paretoAlpha = 3

// paretoMean is the mean of that Pareto distribution, alpha/(alpha-1).
const paretoMean = paretoAlpha / (paretoAlpha - 1.0)

var (
	// paretoSD is its standard deviation,
	// sqrt(alpha) / ((alpha-1) * sqrt(alpha-2)).
	paretoSD = math.Sqrt(paretoAlpha) / ((paretoAlpha - 1) * math.Sqrt(paretoAlpha-2))
	// paretoMin is the smallest value of the standardized Pareto
	// distribution, (x_m - mean)/sd.
	paretoMin = (1 - paretoMean) / paretoSD
)

// The names, in the order Names returns them.
var names = []string{"normal", "pareto", "paretonormal"}

type dist struct {
	quantile func(u float64) float64
	table    func() []int16
}

var dists = map[string]dist{
	"normal":       {normalQuantile, sync.OnceValue(func() []int16 { return directTable(normalQuantile) })},
	"pareto":       {paretoQuantile, sync.OnceValue(func() []int16 { return directTable(paretoQuantile) })},
	"paretonormal": {paretoNormalQuantile, sync.OnceValue(func() []int16 { return cdfTable(paretoNormalCDF) })},
}

// Names returns the names of the distributions, "normal", "pareto" and
// "paretonormal", in that order. The slice is the caller's.
func Names() []string { return slices.Clone(names) }

func unknown(name string) error {
	last := len(names) - 1
	list := names[0]
	for i := 1; i < last; i++ {
		list += ", " + names[i]
	}
	list += " and " + names[last]
	return fmt.Errorf("disttable: unknown distribution %q; the distributions are %s", name, list)
}

// Table returns the Size-entry table for the named distribution, as netem
// takes it in TCA_NETEM_DELAY_DIST: entry i is
// clamp(round(Scale * Quantile(name, (i+0.5)/Size))) with the clamp to the
// int16 range. The table is computed on the first call for that name; the
// slice returned is a fresh copy that the caller may keep or modify.
func Table(name string) ([]int16, error) {
	d, ok := dists[name]
	if !ok {
		return nil, unknown(name)
	}
	return slices.Clone(d.table()), nil
}

// Quantile returns the inverse CDF at u of the named distribution,
// standardized to mean 0 and standard deviation 1, and not clamped: the
// number that Table scales by Scale, rounds and clamps. u must be in
// [0, 1]; the ends give the distribution's infimum and supremum (-Inf and
// +Inf, except that "pareto" is bounded below by -1/sqrt(3)).
func Quantile(name string, u float64) (float64, error) {
	d, ok := dists[name]
	if !ok {
		return 0, unknown(name)
	}
	if !(u >= 0 && u <= 1) {
		return 0, fmt.Errorf("disttable: quantile level %v is outside [0, 1]", u)
	}
	return d.quantile(u), nil
}

// Moments returns the mean and the (population) standard deviation of the
// entries of t in units of one standard deviation (entry/Scale): what a
// netem delay "mu sigma distribution t" really delivers is mean
// mu + sigma*mean and standard deviation sigma*sd, before netem's rounding
// to the nanosecond. An empty table gives NaN, NaN.
func Moments(t []int16) (mean, sd float64) {
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

// level is the quantile level of entry i: the midpoint of the i-th of Size
// equal slices of [0, 1].
func level(i int) float64 { return (float64(i) + 0.5) / Size }

// toEntry scales a standardized value to a table entry: rounded to the
// nearest integer (halves away from zero) and clamped to the int16 range.
func toEntry(q float64) int16 {
	v := math.Round(Scale * q)
	return int16(max(math.MinInt16, min(math.MaxInt16, v)))
}

// directTable builds a table from a closed-form quantile function.
func directTable(q func(float64) float64) []int16 {
	t := make([]int16, Size)
	for i := range t {
		t[i] = toEntry(q(level(i)))
	}
	return t
}

// normalQuantile is the standard normal inverse CDF.
func normalQuantile(u float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*u-1)
}

// paretoQuantile is the inverse CDF of the Pareto distribution (shape
// paretoAlpha, x_m 1), standardized: ((1-u)^(-1/alpha) - mean) / sd.
func paretoQuantile(u float64) float64 {
	y := math.Pow(1-u, -1.0/paretoAlpha)
	return (y - paretoMean) / paretoSD
}

// paretoSurvival returns y^-alpha, the probability that the Pareto variable
// exceeds y >= 1.
func paretoSurvival(y float64) float64 {
	p := 1.0
	for range paretoAlpha {
		p *= y
	}
	return 1 / p
}
