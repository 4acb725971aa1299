package stats

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

func ms(x float64) time.Duration { return time.Duration(math.Round(x * float64(time.Millisecond))) }

func TestPercentileNearestRank(t *testing.T) {
	// 1..20: nearest rank r = ceil(p*n/100).
	xs := make([]int, 20)
	for i := range xs {
		xs[i] = 20 - i // unsorted on purpose
	}
	cases := []struct {
		p    float64
		want int
	}{
		{0, 1}, {5, 1}, {5.01, 2}, {50, 10}, {50.1, 11}, {95, 19}, {99, 20}, {100, 20},
	}
	for _, c := range cases {
		got, err := Percentile(xs, c.p)
		if err != nil || got != c.want {
			t.Errorf("Percentile(1..20, %v) = %v, %v; want %v", c.p, got, err, c.want)
		}
	}
	if xs[0] != 20 {
		t.Errorf("Percentile modified its input")
	}
	// Five values: p50 is the third, p95 and p99 the fifth.
	five := []float64{5, 1, 4, 2, 3}
	q, _ := percentiles(five)
	if q.P50 != 3 || q.P95 != 5 || q.P99 != 5 {
		t.Errorf("percentiles(1..5) = %+v", q)
	}
	// 200 values: p95 is the 190th, p99 the 198th.
	var big []float64
	for i := 1; i <= 200; i++ {
		big = append(big, float64(i))
	}
	for p, want := range map[float64]float64{50: 100, 95: 190, 99: 198} {
		if got, _ := Percentile(big, p); got != want {
			t.Errorf("Percentile(1..200, %v) = %v, want %v", p, got, want)
		}
	}
	if got, _ := P95(big); got != 190 {
		t.Errorf("P95 = %v", got)
	}
	if got, _ := P50(big); got != 100 {
		t.Errorf("P50 = %v", got)
	}
	if got, _ := P99(big); got != 198 {
		t.Errorf("P99 = %v", got)
	}
}

func TestPercentileErrors(t *testing.T) {
	if _, err := Percentile([]float64{}, 50); !errors.Is(err, ErrEmpty) {
		t.Errorf("empty sample: err = %v, want ErrEmpty", err)
	}
	for _, p := range []float64{-1, 100.5, math.NaN()} {
		if _, err := Percentile([]float64{1}, p); err == nil {
			t.Errorf("Percentile(p=%v) accepted", p)
		}
	}
	if _, err := Median(nil); !errors.Is(err, ErrEmpty) {
		t.Errorf("Median(nil) err = %v", err)
	}
}

func TestMedian(t *testing.T) {
	if m, _ := Median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("odd median = %v", m)
	}
	if m, _ := Median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("even median = %v", m)
	}
}

func TestSummariseRepeatDiscardsWarmup(t *testing.T) {
	var r Repeat
	// 10 samples of 500 ms inside a 5 s warm-up, then 1..100 ms after it.
	for i := range 10 {
		r.Samples = append(r.Samples, Sample{Offset: time.Duration(i) * 400 * time.Millisecond, RTT: 500 * time.Millisecond})
	}
	for i := 1; i <= 100; i++ {
		r.Samples = append(r.Samples, Sample{Offset: 5*time.Second + time.Duration(i)*time.Millisecond, RTT: ms(float64(i))})
	}
	// A sample exactly at the warm-up boundary is kept.
	r.Samples[9].Offset = 5 * time.Second
	r.Samples[9].RTT = ms(0.5)
	s, err := SummariseRepeat(r, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if s.N != 101 || s.Discarded != 9 {
		t.Errorf("N=%d Discarded=%d, want 101 and 9", s.N, s.Discarded)
	}
	// Sorted: 0.5, 1..100. p50 rank 51 -> 50 ms; p95 rank 96 -> 95; p99 rank 100 -> 99.
	if s.P50 != ms(50) || s.P95 != ms(95) || s.P99 != ms(99) {
		t.Errorf("got p50 %v p95 %v p99 %v", s.P50, s.P95, s.P99)
	}
	if _, err := SummariseRepeat(Repeat{Samples: r.Samples[:5]}, 5*time.Second); !errors.Is(err, ErrEmpty) {
		t.Errorf("all-warm-up repeat: err = %v, want ErrEmpty", err)
	}
	if _, err := SummariseRepeat(r, -time.Second); err == nil {
		t.Errorf("negative warm-up accepted")
	}
}

// repeatWithP95 builds a repeat of 20 samples whose nearest-rank p50, p95
// and p99 are the given values (ranks 10, 19 and 20 of 20).
func repeatWithP95(p50, p95, p99 time.Duration) Repeat {
	var r Repeat
	for i := range 20 {
		v := p50
		switch {
		case i >= 19:
			v = p99
		case i == 18:
			v = p95
		case i >= 10:
			v = (p50 + p95) / 2
		}
		r.Samples = append(r.Samples, Sample{Offset: time.Second + time.Duration(i)*time.Millisecond, RTT: v})
	}
	return r
}

func TestSummariseCellMedianOfRepeatsNotPooled(t *testing.T) {
	// Four repeats near 100 ms and one at 400 ms: the median of repeat p95s
	// is 101, a pooled p95 would be far higher.
	p95s := []float64{100, 101, 102, 103, 400}
	var reps []Repeat
	for i, p := range p95s {
		r := repeatWithP95(ms(p-20), ms(p), ms(p+10))
		r.ThroughputMbit = float64(i + 1)
		reps = append(reps, r)
	}
	reps[2].Timeouts = 2
	c, err := SummariseCell(reps, 0)
	if err != nil {
		t.Fatal(err)
	}
	if c.P95 != ms(102) {
		t.Errorf("cell p95 = %v, want median of repeat p95s 102ms", c.P95)
	}
	if c.P50 != ms(82) || c.P99 != ms(112) {
		t.Errorf("cell p50/p99 = %v/%v, want 82ms/112ms", c.P50, c.P99)
	}
	if c.Spread != ms(300) || c.P95Min != ms(100) || c.P95Max != ms(400) {
		t.Errorf("spread %v range %v-%v, want 300ms 100-400", c.Spread, c.P95Min, c.P95Max)
	}
	if c.Timeouts != 2 || !slices.Equal(c.TimeoutsPerRepeat, []int{0, 0, 2, 0, 0}) {
		t.Errorf("timeouts %d %v", c.Timeouts, c.TimeoutsPerRepeat)
	}
	if c.Throughput.Median != 3 || c.Throughput.Min != 1 || c.Throughput.Max != 5 {
		t.Errorf("throughput %+v", c.Throughput)
	}
	if c.SamplesPerRun != 20 || c.Measured != 5 || c.Unmeasured != 0 {
		t.Errorf("samples/run %v measured %d unmeasured %d", c.SamplesPerRun, c.Measured, c.Unmeasured)
	}
}

func TestSummariseCellCountsUnmeasured(t *testing.T) {
	reps := []Repeat{
		repeatWithP95(ms(10), ms(20), ms(30)),
		{Failed: "client exited 1", Timeouts: 0},
		{Samples: []Sample{{Offset: 0, RTT: ms(1)}}, Timeouts: 1}, // only warm-up samples
		repeatWithP95(ms(10), ms(22), ms(30)),
	}
	c, err := SummariseCell(reps, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if c.Measured != 2 || c.Unmeasured != 2 || len(c.Failures) != 2 {
		t.Errorf("measured %d unmeasured %d failures %q", c.Measured, c.Unmeasured, c.Failures)
	}
	if c.Timeouts != 1 {
		t.Errorf("timeouts of an unmeasured repeat were dropped: %d", c.Timeouts)
	}
	if c.P95 != ms(21) {
		t.Errorf("p95 = %v, want 21ms (mean of the two middle values)", c.P95)
	}
	if _, err := SummariseCell([]Repeat{{Failed: "x"}}, 0); !errors.Is(err, ErrNoRepeats) {
		t.Errorf("no measurable repeats: err = %v", err)
	}
}

// A cell that could not be measured says why in its error: the first
// failure's reason travels with ErrNoRepeats, not only the count.
func TestNoRepeatsErrorCarriesFirstReason(t *testing.T) {
	reps := []Repeat{
		{Failed: "client: dial 198.18.0.1:4433: timeout: no recent network activity"},
		{Failed: "the link broke during the run"},
		{Samples: []Sample{{Offset: ms(1), RTT: ms(80)}}}, // all inside the warm-up
	}
	_, err := SummariseCell(reps, ms(5000))
	if !errors.Is(err, ErrNoRepeats) {
		t.Fatalf("err = %v, want ErrNoRepeats", err)
	}
	for _, want := range []string{"3 failed or empty", "repeat 1: client: dial 198.18.0.1:4433: timeout: no recent network activity"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err %q lacks %q", err, want)
		}
	}
	if _, err := SummariseCell(nil, 0); !errors.Is(err, ErrNoRepeats) || strings.Contains(err.Error(), "first") {
		t.Errorf("no repeats at all: err = %v, want ErrNoRepeats with no reason to quote", err)
	}
}

// cellFromPublished builds a five-repeat cell whose repeat p95s have the
// published median and range: [min, median, median, median, max].
func cellFromPublished(t *testing.T, median, lo, hi float64) Cell {
	t.Helper()
	var reps []Repeat
	for _, p := range []float64{lo, median, median, median, hi} {
		reps = append(reps, repeatWithP95(ms(p/2), ms(p), ms(p+1)))
	}
	c, err := SummariseCell(reps, 0)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestReferenceReadingTable feeds the seed's Cubic tables (median p95 and
// p95 range per arm, 80 ms / 10 Mbit and 150 ms / 2 Mbit) into Compare and
// checks the "Reading them" table comes out. The published medians are
// rounded to 0.1 ms, so a delta may differ from the published one by 0.1
// (80:10 at 1%: 144.3 - 82.8 = 61.5 against a published +61.6); thresholds
// and verdicts must match exactly.
func TestReferenceReadingTable(t *testing.T) {
	type arm struct{ median, lo, hi float64 }
	rows := []struct {
		name          string
		tcp, quic     arm
		delta, thresh float64
		verdict       Verdict
	}{
		{"80:10 0%", arm{171.0, 169.8, 171.0}, arm{166.2, 166.2, 167.2}, -4.8, 1.2, Better},
		{"80:10 1%", arm{82.8, 82.7, 82.8}, arm{144.3, 143.8, 144.7}, 61.6, 0.9, Worse},
		{"80:10 2%", arm{83.4, 82.7, 383.2}, arm{158.4, 145.2, 218.4}, 75.0, 300.5, Unresolved},
		{"150:2 0%", arm{348.6, 348.5, 348.8}, arm{353.6, 353.5, 353.8}, 5.0, 0.3, Worse},
		{"150:2 1%", arm{164.0, 162.2, 514.2}, arm{255.4, 248.7, 303.0}, 91.3, 352.0, Unresolved},
		{"150:2 2%", arm{163.9, 161.0, 173.1}, arm{309.1, 298.0, 431.1}, 145.2, 133.1, Worse},
	}
	for _, r := range rows {
		tcp := cellFromPublished(t, r.tcp.median, r.tcp.lo, r.tcp.hi)
		quic := cellFromPublished(t, r.quic.median, r.quic.lo, r.quic.hi)
		c, err := Compare(tcp, quic)
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		if d := c.Delta.Seconds()*1000 - r.delta; math.Abs(d) > 0.1+1e-9 {
			t.Errorf("%s: delta %.1f ms, published %+.1f", r.name, c.Delta.Seconds()*1000, r.delta)
		}
		if c.Threshold != ms(r.thresh) {
			t.Errorf("%s: threshold %v, published %.1f ms", r.name, c.Threshold, r.thresh)
		}
		if c.Verdict != r.verdict {
			t.Errorf("%s: verdict %s, published %s", r.name, c.Verdict, r.verdict)
		}
	}
}

func cellOf(t *testing.T, p95s ...float64) Cell {
	t.Helper()
	var reps []Repeat
	for _, p := range p95s {
		reps = append(reps, repeatWithP95(ms(p/2), ms(p), ms(p)))
	}
	c, err := SummariseCell(reps, 0)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCompareEdgeCases(t *testing.T) {
	cases := []struct {
		name string
		a, b []float64
		want Verdict
	}{
		{"equal with zero spread", []float64{100, 100, 100}, []float64{100, 100, 100}, Unresolved},
		{"equal with spread", []float64{90, 100, 110}, []float64{95, 100, 105}, Unresolved},
		{"zero spread, any difference resolves", []float64{100, 100, 100}, []float64{100.001, 100.001, 100.001}, Worse},
		{"delta exactly at threshold is unresolved", []float64{100, 110, 120}, []float64{120, 130, 140}, Unresolved},
		{"delta just past threshold", []float64{100, 110, 120}, []float64{120.1, 130.1, 140.1}, Worse},
		{"better by more than spread", []float64{200, 201, 202}, []float64{100, 101, 102}, Better},
		{"the wider spread decides", []float64{100, 101, 102}, []float64{100, 150, 400}, Unresolved},
		{"one repeat is never resolved", []float64{100}, []float64{500}, Unresolved},
	}
	for _, c := range cases {
		got, err := Compare(cellOf(t, c.a...), cellOf(t, c.b...))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got.Verdict != c.want {
			t.Errorf("%s: verdict %s (delta %v threshold %v), want %s", c.name, got.Verdict, got.Delta, got.Threshold, c.want)
		}
		if got.Verdict == Unresolved && got.Reason == "" {
			t.Errorf("%s: unresolved without a reason", c.name)
		}
	}
	if _, err := Compare(Cell{}, cellOf(t, 1, 2)); err == nil {
		t.Errorf("Compare with an unmeasured arm accepted")
	}
}

func TestMedianInterval(t *testing.T) {
	// Five values cannot give 95%: range, flagged.
	iv := MedianInterval([]float64{5, 1, 3, 2, 4}, 0.95)
	if iv.Enough || iv.Lo != 1 || iv.Hi != 5 || math.Abs(iv.Level-0.9375) > 1e-12 || iv.Note == "" {
		t.Errorf("n=5: %+v", iv)
	}
	// Six values: [x(1), x(6)] covers with 1 - 2/64 = 0.96875.
	iv = MedianInterval([]float64{6, 5, 4, 3, 2, 1}, 0.95)
	if !iv.Enough || iv.Lo != 1 || iv.Hi != 6 || math.Abs(iv.Level-0.96875) > 1e-12 {
		t.Errorf("n=6: %+v", iv)
	}
	// Twenty values: k=6 gives 1-2*P(B<=5) = 0.9586, k=7 gives 0.8847.
	var xs []float64
	for i := 1; i <= 20; i++ {
		xs = append(xs, float64(i))
	}
	iv = MedianInterval(xs, 0.95)
	if !iv.Enough || iv.Lo != 6 || iv.Hi != 15 || math.Abs(iv.Level-0.958610535) > 1e-6 {
		t.Errorf("n=20: %+v", iv)
	}
}

func TestMannWhitney(t *testing.T) {
	// Complete separation, 5 against 5: exact two-sided p = 2/252.
	u, err := MannWhitney([]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10})
	if err != nil {
		t.Fatal(err)
	}
	if u.Method != "exact" || u.U != 0 || math.Abs(u.P-2.0/252) > 1e-12 || !u.Enough {
		t.Errorf("separated: %+v", u)
	}
	// Identical samples: p = 1.
	u, _ = MannWhitney([]float64{1, 2, 3}, []float64{1, 2, 3})
	if u.P != 1 {
		t.Errorf("identical: p = %v", u.P)
	}
	// 3 against 3 cannot reach 0.05 (min p = 2/20).
	u, _ = MannWhitney([]float64{1, 2, 3}, []float64{4, 5, 6})
	if u.Enough || math.Abs(u.MinP-0.1) > 1e-12 || u.Note == "" {
		t.Errorf("3v3: %+v", u)
	}
	// One overlap, 4 against 4: U=1; P(|U-8| >= 7) = 4/70.
	u, _ = MannWhitney([]float64{1, 2, 3, 5}, []float64{4, 6, 7, 8})
	if u.U != 1 || math.Abs(u.P-4.0/70) > 1e-12 {
		t.Errorf("4v4 one overlap: %+v", u)
	}
	// Large samples use the normal approximation and still separate.
	var a, b []float64
	for i := range 30 {
		a = append(a, float64(i))
		b = append(b, float64(i)+20)
	}
	u, _ = MannWhitney(a, b)
	if u.Method != "normal" || u.P > 1e-4 {
		t.Errorf("large separated: %+v", u)
	}
	if _, err := MannWhitney(nil, []float64{1}); err == nil {
		t.Errorf("empty sample accepted")
	}
}
