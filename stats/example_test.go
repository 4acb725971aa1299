package stats_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/shakenfist/quicbench/stats"
)

// steady returns a repeat whose round trips after a 1 s warm-up are
// base, base+1ms, ..., base+19ms.
func steady(base time.Duration) stats.Repeat {
	var r stats.Repeat
	for i := range 20 {
		r.Samples = append(r.Samples, stats.Sample{
			Offset: time.Second + time.Duration(i)*20*time.Millisecond,
			RTT:    base + time.Duration(i)*time.Millisecond,
		})
	}
	return r
}

func Example() {
	warmup := time.Second
	var tcp, quic []stats.Repeat
	for i := range 5 {
		jitter := time.Duration(i) * 100 * time.Microsecond
		tcp = append(tcp, steady(80*time.Millisecond+jitter))
		quic = append(quic, steady(140*time.Millisecond+jitter))
	}
	a, _ := stats.SummariseCell(tcp, warmup)
	b, _ := stats.SummariseCell(quic, warmup)
	c, _ := stats.Compare(a, b)
	fmt.Printf("tcp p95 %v spread %v\n", a.P95, a.Spread)
	fmt.Printf("quic p95 %v spread %v\n", b.P95, b.Spread)
	fmt.Printf("quic is %s: delta %v, threshold %v\n", c.Verdict, c.Delta, c.Threshold)
	// Output:
	// tcp p95 98.2ms spread 400µs
	// quic p95 158.2ms spread 400µs
	// quic is worse: delta 60ms, threshold 400µs
}

func ExamplePercentile() {
	rtts := []float64{12, 15, 11, 90, 13, 14, 12, 16, 13, 12}
	p50, _ := stats.Percentile(rtts, 50)
	p95, _ := stats.Percentile(rtts, 95)
	fmt.Println(p50, p95)
	_, err := stats.Percentile([]float64{}, 95)
	fmt.Println(err != nil)
	// Output:
	// 13 90
	// true
}

func ExampleEstimateRepeats() {
	// A pilot's repeat p95s, in milliseconds: tcp against quic at 1% loss.
	tcp := []float64{212, 248, 231}
	quic := []float64{262, 240, 281}
	e, err := stats.EstimateRepeats(tcp, quic, stats.RepeatsOptions{Cap: 30, Seed: 1})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("delta %.0f ms, pooled SD %.1f ms\n", e.Delta, e.SD)
	for _, n := range []int{3, 10, 30} {
		s, u, _ := e.At(n)
		fmt.Printf("n=%d: spread rule %.2f, U test %.2f\n", n, s, u)
	}
	fmt.Printf("spread rule resolves at n=%d (0: not within %d); U test at n=%d\n", e.SpreadN, e.Cap, e.UN)
	// Output:
	// delta 31 ms, pooled SD 19.3 ms
	// n=3: spread rule 0.35, U test 0.00
	// n=10: spread rule 0.01, U test 0.90
	// n=30: spread rule 0.00, U test 1.00
	// spread rule resolves at n=0 (0: not within 30); U test at n=8
}

// A confidence interval for the median of a cell's repeat p95s, from
// order statistics (no assumption about their distribution): six repeats
// are the fewest that reach 95%.
func ExampleMedianInterval() {
	ms := func(xs ...float64) []float64 {
		for i := range xs {
			xs[i] *= float64(time.Millisecond)
		}
		return xs
	}
	six := stats.MedianInterval(ms(212, 248, 231, 225, 240, 219), stats.DefaultConfidence)
	fmt.Printf("%v to %v at %.4f, enough: %v\n", six.Lo, six.Hi, six.Level, six.Enough)
	five := stats.MedianInterval(ms(212, 248, 231, 225, 240), stats.DefaultConfidence)
	fmt.Printf("%v to %v at %.4f, enough: %v\n", five.Lo, five.Hi, five.Level, five.Enough)
	// Output:
	// 212ms to 248ms at 0.9688, enough: true
	// 212ms to 248ms at 0.9375, enough: false
}

// The U test beside the spread rule: whether two arms' repeat p95s could
// come from one distribution. With three repeats each no outcome can
// reach 5%, and the test says so.
func ExampleMannWhitney() {
	tcp := []float64{212, 248, 231, 225, 240, 219}
	quic := []float64{262, 280, 281, 270, 259, 266}
	u, err := stats.MannWhitney(tcp, quic)
	fmt.Printf("U %.0f p %.4f %s, enough: %v, %v\n", u.U, u.P, u.Method, u.Enough, err)
	u, err = stats.MannWhitney(tcp[:3], quic[:3])
	fmt.Printf("U %.0f p %.4f, smallest possible p %.4f, enough: %v, %v\n", u.U, u.P, u.MinP, u.Enough, err)
	_, err = stats.MannWhitney(nil, quic)
	fmt.Println(errors.Is(err, stats.ErrEmpty))
	// Output:
	// U 0 p 0.0022 exact, enough: true, <nil>
	// U 0 p 0.1000, smallest possible p 0.1000, enough: false, <nil>
	// true
}
