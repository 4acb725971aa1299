package stats

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Cell summarises one arm of one cell (profile, loss, congestion control)
// over its repeats. Every figure is taken over the repeats' own percentiles:
// a pooled percentile would let one bad repeat dominate and would hide the
// run-to-run variation the verdict turns on.
type Cell struct {
	// Repeats holds each measured repeat's summary, in input order.
	Repeats []RepeatSummary `json:"repeats"`
	// Measured is len(Repeats); Unmeasured counts repeats that failed or
	// had no sample after the warm-up, with the reasons in Failures.
	Measured   int      `json:"measured"`
	Unmeasured int      `json:"unmeasured"`
	Failures   []string `json:"failures,omitempty"`

	// P50, P95 and P99 are the medians over repeats of each repeat's own
	// percentile.
	Quantiles[time.Duration]
	// P95Min and P95Max are the lowest and highest repeat p95; Spread is
	// their difference.
	P95Min time.Duration `json:"p95_min"`
	P95Max time.Duration `json:"p95_max"`
	Spread time.Duration `json:"spread"`
	// P95Interval is a distribution-free confidence interval for the median
	// repeat p95 (see MedianInterval).
	P95Interval Interval `json:"p95_interval"`

	// SamplesPerRun is the median number of post-warm-up samples per repeat.
	SamplesPerRun float64 `json:"samples_per_run"`
	// Timeouts is the total over all repeats, TimeoutsPerRepeat each
	// repeat's count (unmeasured repeats included, in input order).
	Timeouts          int   `json:"timeouts"`
	TimeoutsPerRepeat []int `json:"timeouts_per_repeat"`

	// Throughput is the median over measured repeats of each repeat's
	// saturating-channel Mbit/s, with its range.
	Throughput Summary `json:"throughput_mbit"`
}

// Summary is the median and range of a handful of per-repeat figures.
type Summary struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// Describe returns the median, minimum and maximum of xs.
func Describe(xs []float64) (Summary, error) {
	m, err := Median(xs)
	if err != nil {
		return Summary{}, err
	}
	return Summary{N: len(xs), Median: m, Min: slices.Min(xs), Max: slices.Max(xs)}, nil
}

// ErrNoRepeats is returned by SummariseCell when no repeat could be measured.
var ErrNoRepeats = errors.New("stats: no repeat of this cell could be measured")

// SummariseCell summarises one arm of one cell. Repeats that failed, or that
// have no sample after the warm-up, are counted in Unmeasured with their
// reason and take no part in the percentiles; their timeouts still count. If
// no repeat is measurable the error wraps ErrNoRepeats, quotes the first
// repeat's reason, and the returned Cell still carries the counts and every
// reason (Failures).
func SummariseCell(repeats []Repeat, warmup time.Duration) (Cell, error) {
	var c Cell
	c.TimeoutsPerRepeat = make([]int, 0, len(repeats))
	for i, r := range repeats {
		c.Timeouts += r.Timeouts
		c.TimeoutsPerRepeat = append(c.TimeoutsPerRepeat, r.Timeouts)
		if r.Failed != "" {
			c.Unmeasured++
			c.Failures = append(c.Failures, fmt.Sprintf("repeat %d: %s", i+1, r.Failed))
			continue
		}
		s, err := SummariseRepeat(r, warmup)
		if err != nil {
			c.Unmeasured++
			c.Failures = append(c.Failures, fmt.Sprintf("repeat %d: %v", i+1, err))
			continue
		}
		c.Repeats = append(c.Repeats, s)
	}
	c.Measured = len(c.Repeats)
	if c.Measured == 0 {
		if len(c.Failures) == 0 {
			return c, fmt.Errorf("%w (no repeats given)", ErrNoRepeats)
		}
		// The first reason, so that the error alone says why; the rest
		// are in Failures.
		return c, fmt.Errorf("%w (%d failed or empty; the first, %s)", ErrNoRepeats, c.Unmeasured, c.Failures[0])
	}
	var p50, p95, p99, n, tput []float64
	for _, s := range c.Repeats {
		p50 = append(p50, float64(s.P50))
		p95 = append(p95, float64(s.P95))
		p99 = append(p99, float64(s.P99))
		n = append(n, float64(s.N))
		tput = append(tput, s.ThroughputMbit)
	}
	c.P50 = time.Duration(mustMedian(p50))
	c.P95 = time.Duration(mustMedian(p95))
	c.P99 = time.Duration(mustMedian(p99))
	c.P95Min = time.Duration(slices.Min(p95))
	c.P95Max = time.Duration(slices.Max(p95))
	c.Spread = c.P95Max - c.P95Min
	c.SamplesPerRun = mustMedian(n)
	c.P95Interval = MedianInterval(p95, DefaultConfidence)
	c.Throughput, _ = Describe(tput)
	return c, nil
}

// RepeatP95s returns each measured repeat's p95, in order.
func (c Cell) RepeatP95s() []time.Duration {
	out := make([]time.Duration, len(c.Repeats))
	for i, r := range c.Repeats {
		out[i] = r.P95
	}
	return out
}

// mustMedian is Median for inputs already known to be non-empty.
func mustMedian(xs []float64) float64 {
	m, _ := Median(xs)
	return m
}
