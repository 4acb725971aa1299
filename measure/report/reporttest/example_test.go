package reporttest_test

import (
	"fmt"
	"time"

	"github.com/shakenfist/quicbench/measure/report/reporttest"
	"github.com/shakenfist/quicbench/stats"
)

func ExampleRepeat() {
	samples := reporttest.Repeat(80.4, 82.8, 392.5, 368)
	s, err := stats.SummariseRepeat(stats.Repeat{Samples: samples}, reporttest.Warmup)
	if err != nil {
		fmt.Println(err)
		return
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	fmt.Printf("n=%d discarded=%d p50=%.1f p95=%.1f p99=%.1f\n", s.N, s.Discarded, ms(s.P50), ms(s.P95), ms(s.P99))
	// Output:
	// n=368 discarded=10 p50=80.4 p95=82.8 p99=392.5
}
