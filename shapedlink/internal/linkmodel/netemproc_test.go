package linkmodel

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// lag1 is the lag-1 sample autocorrelation of xs.
func lag1(xs []float64) float64 {
	var mean float64
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	var num, den float64
	for i, x := range xs {
		den += (x - mean) * (x - mean)
		if i > 0 {
			num += (x - mean) * (xs[i-1] - mean)
		}
	}
	return num / den
}

// TestCrandCorrelation: netem's correlated generator mixes each fresh
// value with the last one by rho, an AR(1) process whose lag-1
// autocorrelation is rho; with rho zero the values are independent.
func TestCrandCorrelation(t *testing.T) {
	for _, pct := range []float64{0, 25, 75} {
		var rng rand.PCG
		rng.Seed(1, 2)
		c := crand{rho: uint64(u32(pct))}
		xs := make([]float64, 200_000)
		for i := range xs {
			xs[i] = float64(c.next(&rng))
		}
		if got := lag1(xs); math.Abs(got-pct/100) > 0.01 {
			t.Errorf("correlation %v%%: lag-1 autocorrelation %.4f, want %.2f", pct, got, pct/100)
		}
	}
	// The arithmetic, by hand: rho = 2^30-1 (about 25%) takes three
	// quarters of the fresh value and a quarter of the last.
	var rng rand.PCG
	rng.Seed(3, 4)
	c := crand{rho: 1<<30 - 1, last: 1<<32 - 1<<20}
	peek := rng
	fresh := peek.Uint64() >> 32
	want := uint32((fresh*(1<<32-1<<30) + uint64(c.last)*(1<<30)) >> 32)
	if got := c.next(&rng); got != want {
		t.Errorf("crand: got %d, want %d", got, want)
	}
}

// TestDuplicate: with 100% duplication every frame is judged twice, the
// duplicate first (due no later than the original, which waits behind it
// at the rate); duplication and loss cancel as in netem: with 50% loss a
// frame that is lost still goes through once, and one that is not is
// duplicated and the copy meets the loss again, so 0.5*1 + 0.5*1.5 = 1.25
// copies arrive per frame.
func TestDuplicate(t *testing.T) {
	m := New(Direction{Delay: 10 * time.Millisecond, RateMbit: 10, Limit: 100, DupPct: 100, Seed: 5}, nil)
	due, v := m.Arrive(0, 1000)
	ddue, dv, _, _, ok := m.Duplicate()
	if !ok || v != Accepted || dv != Accepted || ddue > due {
		t.Fatalf("100%% duplication: original %v at %d, duplicate %v (made %v) at %d", v, due, dv, ok, ddue)
	}
	if p, _ := m.Held(); p != 2 {
		t.Fatalf("held %d frames after one duplicated arrival, want 2", p)
	}
	// The duplicate counts against the limit before the original.
	m = New(Direction{Delay: 10 * time.Millisecond, RateMbit: 10, Limit: 1, DupPct: 100, Seed: 5}, nil)
	_, v = m.Arrive(0, 1000)
	_, dv, _, _, _ = m.Duplicate()
	if dv != Accepted || v != OverLimit {
		t.Errorf("limit 1: duplicate %v, original %v; want the duplicate accepted and the original over the limit", dv, v)
	}

	const n = 200_000
	m = New(Direction{Delay: 10 * time.Millisecond, Limit: 1 << 20, DupPct: 100, LossPct: 50, Seed: 6}, nil)
	copies := 0
	for i := 0; i < n; i++ {
		if _, v := m.Arrive(int64(i), 100); v == Accepted {
			copies++
			m.Depart(100)
		}
		if _, dv, _, _, ok := m.Duplicate(); ok && dv == Accepted {
			copies++
			m.Depart(100)
		}
	}
	if got := float64(copies) / n; math.Abs(got-1.25) > 0.01 {
		t.Errorf("100%% duplication with 50%% loss: %.4f copies per frame, want 1.25", got)
	}
	// 10% duplication alone.
	m = New(Direction{Delay: 10 * time.Millisecond, Limit: 1 << 20, DupPct: 10, Seed: 7}, nil)
	dups := 0
	for i := 0; i < n; i++ {
		m.Arrive(int64(i), 100)
		if _, _, _, _, ok := m.Duplicate(); ok {
			dups++
		}
	}
	if got := float64(dups) / n; math.Abs(got-0.10) > 5*math.Sqrt(0.1*0.9/n) {
		t.Errorf("10%% duplication duplicated %.4f of the frames", got)
	}
}

// TestReorder: with gap G and 100% reordering, frames G-1, 2G-1, ... go
// at once and the others are delayed; with gap 1 and 25%, a quarter of the
// frames go at once, due at their arrival and never behind the rate queue.
func TestReorder(t *testing.T) {
	m := New(Direction{Delay: 10 * time.Millisecond, RateMbit: 1000, Limit: 1 << 20, ReorderPct: 100, ReorderGap: 5, Seed: 1}, nil)
	var got []int
	for i := 0; i < 20; i++ {
		now := int64(i) * int64(time.Millisecond)
		due, _ := m.Arrive(now, 100)
		if m.Reordered() {
			got = append(got, i)
			if due != now {
				t.Errorf("frame %d reordered but due %d after its arrival", i, due-now)
			}
		}
	}
	if want := []int{4, 9, 14, 19}; !slices.Equal(got, want) {
		t.Errorf("gap 5, 100%%: frames %v reordered, want %v", got, want)
	}
	const n = 200_000
	m = New(Direction{Delay: 10 * time.Millisecond, RateMbit: 10, Limit: 1 << 20, ReorderPct: 25, Seed: 2}, nil)
	re := 0
	var last int64
	for i := 0; i < n; i++ {
		now := int64(i) * int64(2*time.Millisecond) // slower than the rate: no queue
		due, _ := m.Arrive(now, 1000)
		m.Depart(1000)
		if m.Reordered() {
			re++
			continue
		}
		if due < last {
			t.Fatalf("frame %d due before the delayed frame ahead of it", i)
		}
		last = due
	}
	if got := float64(re) / n; math.Abs(got-0.25) > 5*math.Sqrt(0.25*0.75/n) {
		t.Errorf("gap 1, 25%%: %.4f reordered, want 0.25", got)
	}
}

// TestCorrelatedLoss: a correlated Bernoulli loss runs netem's generator:
// losses cluster (a loss follows a loss more often than the loss rate),
// and, as netem's documentation warns, fewer frames are lost than the
// percentage says, because the mixed values bunch around the middle.
func TestCorrelatedLoss(t *testing.T) {
	const n = 1_000_000
	run := func(corr float64) (loss, afterLoss float64) {
		m := New(Direction{Delay: time.Millisecond, Limit: 1 << 20, LossPct: 10, LossCorr: corr, Seed: 3}, nil)
		lost, both, prev := 0, 0, false
		for i := 0; i < n; i++ {
			_, v := m.Arrive(int64(i), 100)
			l := v == Lost
			if v == Accepted {
				m.Depart(100)
			}
			if l {
				lost++
				if prev {
					both++
				}
			}
			prev = l
		}
		return float64(lost) / n, float64(both) / float64(lost)
	}
	loss0, after0 := run(0)
	loss, after := run(50)
	if math.Abs(loss0-0.10) > 0.002 || math.Abs(after0-0.10) > 0.005 {
		t.Errorf("uncorrelated 10%%: lost %.4f, P(loss|loss) %.4f; want both 0.10", loss0, after0)
	}
	if !(loss < 0.09 && after > 2*loss) {
		t.Errorf("50%% correlated 10%%: lost %.4f, P(loss|loss) %.4f; want fewer losses than 10%% and clustered", loss, after)
	}
}

// TestJitterTable: with a distribution, the delay is the delay plus
// jitter times a table draw: for "normal" the delays' mean is the delay
// and their spread the jitter (the table stops at 4 sigma), and the KS
// distance to the normal distribution is small; a correlation changes
// nothing, as in netem (below).
func TestJitterTable(t *testing.T) {
	const n = 50_000
	d, j := 40*time.Millisecond, 5*time.Millisecond
	delays := func(corr float64) []float64 {
		m := New(Direction{Delay: d, Jitter: j, JitterDist: "normal", JitterCorr: corr, RateMbit: 1000, Limit: 10, Seed: 11}, nil)
		out := make([]float64, n)
		for i := range out {
			now := int64(i) * int64(time.Second)
			due, v := m.Arrive(now, 100)
			if v != Accepted {
				t.Fatalf("frame %d: %v", i, v)
			}
			m.Depart(100)
			out[i] = float64(due-now-m.txTime(100)-int64(d)) / float64(j) // in sigmas
		}
		return out
	}
	xs := delays(0)
	var mean, sq float64
	for _, x := range xs {
		mean += x
		sq += x * x
	}
	mean /= n
	sd := math.Sqrt(sq/n - mean*mean)
	if math.Abs(mean) > 0.02 || math.Abs(sd-1) > 0.02 {
		t.Errorf("normal jitter: mean %.4f sigma, sd %.4f sigma; want 0 and 1", mean, sd)
	}
	if lag := lag1(xs); math.Abs(lag) > 0.02 {
		t.Errorf("uncorrelated normal jitter has lag-1 autocorrelation %.4f", lag)
	}
	slices.Sort(xs)
	var dmax float64
	for i, x := range xs {
		f := 0.5 * math.Erfc(-x/math.Sqrt2)
		dmax = max(dmax, math.Abs(f-float64(i)/n), math.Abs(f-float64(i+1)/n))
	}
	if crit := 1.95 / math.Sqrt(n); dmax > crit {
		t.Errorf("normal jitter: KS distance %.4f to the normal distribution (critical %.4f)", dmax, crit)
	}
	// netem (6.1) indexes the table with the correlated value modulo the
	// table's size, which keeps only its low bits, so a delay correlation
	// leaves the delays all but uncorrelated; the emulator does the same.
	if lag := lag1(delays(75)); math.Abs(lag) > 0.02 {
		t.Errorf("75%% correlated normal jitter: lag-1 autocorrelation %.3f; netem's table lookup keeps none of it", lag)
	}
}

// TestJitterNoRateReorders: with no rate, jitter alone can put a frame
// ahead of an earlier one, as netem's tfifo orders by time to send.
func TestJitterNoRateReorders(t *testing.T) {
	m := New(Direction{Delay: 40 * time.Millisecond, Jitter: 10 * time.Millisecond, Limit: 1000, Seed: 3}, nil)
	var last int64
	for i := 0; i < 1000; i++ {
		due, _ := m.Arrive(int64(i)*int64(100*time.Microsecond), 100)
		if due < last {
			return
		}
		last = due
	}
	t.Error("1000 frames 0.1 ms apart with 10 ms jitter and no rate left in order")
}
