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

// tableSize is the number of entries in every table.
const tableSize = 4096

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

// Table returns the table for the named distribution, tableSize entries,
// as netem takes it in TCA_NETEM_DELAY_DIST: entry i is
// clamp(round(Scale * quantile(name, (i+0.5)/tableSize))) with the clamp
// to the int16 range. The table is computed on the first call for that
// name; the slice returned is a fresh copy that the caller may keep or
// modify.
func Table(name string) ([]int16, error) {
	d, ok := dists[name]
	if !ok {
		return nil, unknown(name)
	}
	return slices.Clone(d.table()), nil
}

// level is the quantile level of entry i: the midpoint of the i-th of
// tableSize equal slices of [0, 1].
func level(i int) float64 { return (float64(i) + 0.5) / tableSize }

// toEntry scales a standardized value to a table entry: rounded to the
// nearest integer (halves away from zero) and clamped to the int16 range.
func toEntry(q float64) int16 {
	v := math.Round(Scale * q)
	return int16(max(math.MinInt16, min(math.MaxInt16, v)))
}

// directTable builds a table from a closed-form quantile function.
func directTable(q func(float64) float64) []int16 {
	t := make([]int16, tableSize)
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
