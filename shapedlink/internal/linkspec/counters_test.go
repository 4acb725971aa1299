package linkspec

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// lateExactUs is the top of the histogram's exact range: buckets below it
// are 1 us wide, buckets above it at most 12.5% of their lower edge.
const lateExactUs = 16

// checkLateBucket checks that v lies in its bucket's edges and that the
// bucket is no wider than the scheme allows.
func checkLateBucket(t *testing.T, v uint64) int {
	t.Helper()
	i := LateBucket(v)
	if i < 0 || i >= lateBuckets {
		t.Fatalf("LateBucket(%d) = %d, outside [0, %d)", v, i, lateBuckets)
	}
	lo, hi := lateBucketEdges(i)
	if v < lo || v >= hi {
		t.Fatalf("LateBucket(%d) = %d, whose edges [%d, %d) do not hold it", v, i, lo, hi)
	}
	if i == lateBuckets-1 {
		return i
	}
	if lo < lateExactUs*1000 {
		if hi-lo != 1000 {
			t.Fatalf("bucket %d [%d, %d) is in the exact range but not 1 us wide", i, lo, hi)
		}
	} else if 8*(hi-lo) > lo {
		t.Fatalf("bucket %d [%d, %d) is wider than 12.5%% of its lower edge", i, lo, hi)
	}
	return i
}

func TestLateBucketHoldsValue(t *testing.T) {
	prev, prevV := 0, uint64(0)
	step := func(v uint64) {
		i := checkLateBucket(t, v)
		if i < prev {
			t.Fatalf("LateBucket(%d) = %d below LateBucket(%d) = %d", v, i, prevV, prev)
		}
		prev, prevV = i, v
	}
	for v := uint64(0); v <= 10000; v++ {
		step(v)
	}
	// A geometric sweep (about 0.4% a step) to 2^31 ns, past the overflow
	// bucket's 2^20 us, checking each step's neighbours too.
	for v := uint64(10002); v <= 1<<31; v += v / 256 {
		step(v - 1)
		step(v)
		step(v + 1)
	}
	if prev != lateBuckets-1 {
		t.Fatalf("2^31 ns went to bucket %d, not the overflow bucket %d", prev, lateBuckets-1)
	}
	for _, v := range []uint64{1<<31 + 1, 1 << 40, math.MaxInt64, math.MaxUint64} {
		if i := LateBucket(v); i != lateBuckets-1 {
			t.Errorf("LateBucket(%d) = %d, not the overflow bucket %d", v, i, lateBuckets-1)
		}
	}
}

func TestLateBucketEdgesTile(t *testing.T) {
	var prevHi uint64
	for i := range lateBuckets {
		lo, hi := lateBucketEdges(i)
		if lo != prevHi {
			t.Fatalf("bucket %d starts at %d, bucket %d ended at %d", i, lo, i-1, prevHi)
		}
		if hi <= lo {
			t.Fatalf("bucket %d has edges [%d, %d)", i, lo, hi)
		}
		// Both ends of every bucket map back to it.
		if got := checkLateBucket(t, lo); got != i {
			t.Fatalf("LateBucket(%d), bucket %d's lower edge, = %d", lo, i, got)
		}
		if got := checkLateBucket(t, hi-1); got != i {
			t.Fatalf("LateBucket(%d), just below bucket %d's upper edge, = %d", hi-1, i, got)
		}
		prevHi = hi
	}
	if prevHi != math.MaxUint64 {
		t.Errorf("the overflow bucket ends at %d, not math.MaxUint64", prevHi)
	}
	lo, _ := lateBucketEdges(lateBuckets - 1)
	if lo < uint64(time.Second) {
		t.Errorf("the overflow bucket starts at %v, below 1 s", time.Duration(lo))
	}
	if n := testing.AllocsPerRun(100, func() { _ = LateBucket(123456789) }); n != 0 {
		t.Errorf("LateBucket allocates %v times", n)
	}
}

// lateHist builds the lateness statistics of samples (nanoseconds) as the
// shaper would.
func lateHist(samples ...uint64) Counters {
	var s Counters
	for _, v := range samples {
		s.Late[LateBucket(v)]++
		s.MaxLateNanos = max(s.MaxLateNanos, v)
	}
	return s
}

func repeat(n int, v time.Duration) []uint64 {
	return slices.Repeat([]uint64{uint64(v)}, n)
}

func TestLateQuantileCrafted(t *testing.T) {
	us := time.Microsecond
	// 990 frames at 10 us and 10 at 300 us: ranks 1-990 are in [10, 11) us,
	// 991-1000 in [288, 320) us, where the maximum (300 us) lies.
	a := lateHist(slices.Concat(repeat(990, 10*us), repeat(10, 300*us))...)
	// The same with one more at 300 us: 0.99*1001 = 990.99, so p99 is the
	// 991st frame, at 300 us (a rank rounded down would say 11 us).
	b := lateHist(slices.Concat(repeat(990, 10*us), repeat(11, 300*us))...)
	// 990 at 10 us, 9 at 300 us, 1 at 700 us: the 300 us bucket's upper edge
	// (320 us) is below the maximum, so it is returned as such.
	c := lateHist(slices.Concat(repeat(990, 10*us), repeat(9, 300*us), repeat(1, 700*us))...)
	// Below 1 us, in bucket [0, 1) us, and one in [1, 2) us.
	d := lateHist(200, 300, 1500)
	// Beyond the histogram's range: the maximum.
	e := lateHist(uint64(10*us), uint64(2*time.Second), uint64(3*time.Second))
	// The maximum lagging the buckets (published after them): ignored.
	f := lateHist(slices.Concat(repeat(990, 10*us), repeat(10, 300*us))...)
	f.MaxLateNanos = uint64(5 * us)
	g := lateHist(uint64(10*us), uint64(2*time.Second))
	g.MaxLateNanos = uint64(10 * us)

	for _, tc := range []struct {
		name string
		s    Counters
		q    float64
		want time.Duration
	}{
		{"a p1", a, 0.01, 11 * us},
		{"a p50", a, 0.5, 11 * us},
		{"a p99", a, 0.99, 11 * us}, // rank 990, the last at 10 us
		{"a p99.1", a, 0.991, 300 * us},
		{"a p99.5", a, 0.995, 300 * us},
		{"a p100", a, 1, 300 * us},
		{"b p99", b, 0.99, 300 * us},
		{"b p98.9", b, 0.989, 11 * us}, // 0.989*1001 = 989.989: rank 990
		{"c p99", c, 0.99, 11 * us},
		{"c p99.1", c, 0.991, 320 * us},
		{"c p99.9", c, 0.999, 320 * us}, // rank 999, the last at 300 us
		{"c p99.95", c, 0.9995, 700 * us},
		{"c p100", c, 1, 700 * us},
		{"d p50", d, 0.5, us},
		{"d p100", d, 1, 1500},
		{"e p30", e, 0.3, 11 * us},
		{"e p50", e, 0.5, 3 * time.Second},
		{"e p100", e, 1, 3 * time.Second},
		{"f p99", f, 0.99, 11 * us},
		{"f p100", f, 1, 320 * us},
		{"g p100", g, 1, (1 << 20) * us},
		{"empty", Counters{}, 0.99, 0},
	} {
		if got := tc.s.LateQuantile(tc.q); got != tc.want {
			t.Errorf("%s: LateQuantile(%v) = %v, want %v", tc.name, tc.q, got, tc.want)
		}
	}
}

// TestLateQuantileBound checks LateQuantile against the exact quantile of
// random samples: never below it, and at most one bucket's width above.
func TestLateQuantileBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(0x71626d75, 0x6c617431))
	// Log-uniform over 100 ns to 2^31 ns (about 2.1 s): every octave,
	// some of the overflow bucket.
	logUniform := func() uint64 {
		return uint64(math.Exp(math.Log(100) + rng.Float64()*(31*math.Ln2-math.Log(100))))
	}
	// Mostly tens of microseconds with a rare millisecond tail, as a
	// shaper's lateness looks.
	typical := func() uint64 {
		v := rng.ExpFloat64() * 30e3
		if rng.IntN(100) == 0 {
			v += rng.ExpFloat64() * 2e6
		}
		return uint64(v)
	}
	// A few values, many times each, so quantiles fall on bucket edges.
	clumped := func() uint64 {
		return []uint64{0, 999, 1000, 15999, 16000, 128000, 131071, 131072, 1 << 30}[rng.IntN(9)]
	}
	overflowLo, _ := lateBucketEdges(lateBuckets - 1)
	qs := []float64{0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.995, 0.999, 0.9999, 1}
	for _, gen := range []struct {
		name string
		draw func() uint64
	}{{"log-uniform", logUniform}, {"typical", typical}, {"clumped", clumped}} {
		for _, n := range []int{1, 2, 3, 10, 99, 100, 1000, 10007, 100000} {
			for range 5 {
				samples := make([]uint64, n)
				for i := range samples {
					samples[i] = gen.draw()
				}
				s := lateHist(samples...)
				slices.Sort(samples)
				for _, q := range qs {
					rank := min(max(int(math.Ceil(q*float64(n))), 1), n)
					exact := samples[rank-1]
					got := uint64(s.LateQuantile(q))
					if got < exact {
						t.Fatalf("%s n=%d: LateQuantile(%v) = %d ns, below the exact %d ns", gen.name, n, q, got, exact)
					}
					if exact < overflowLo && float64(got) > float64(exact)*1.125+1000 {
						t.Fatalf("%s n=%d: LateQuantile(%v) = %d ns, more than 12.5%% + 1 us above the exact %d ns", gen.name, n, q, got, exact)
					}
					if q == 1 && got != exact {
						t.Fatalf("%s n=%d: LateQuantile(1) = %d ns, not the maximum %d ns", gen.name, n, got, exact)
					}
				}
			}
		}
	}
}
