package report_test

import (
	"fmt"
	"time"

	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/stats"
)

// tinyRun is a run whose 20 round trips after a 1 s warm-up are base,
// base+1ms, ..., base+19ms, so its p95 is base+18ms.
func tinyRun(arm string, repeat int, base time.Duration) results.Run {
	r := results.Run{
		Schema: results.SchemaVersion,
		Cell:   results.Cell{Profile: "80:10", RTTms: 80, RateMbit: 10, LossPct: 1, CC: "reno"},
		Arm:    arm, Repeat: repeat, Warmup: time.Second,
		ThroughputMbit: 1.5, ConnectTime: 84 * time.Millisecond,
		Link: results.Link{Backend: "emulator", Applied: []string{"delay 40ms rate 10mbit loss 1% limit 110"}, Limit: 110},
	}
	for i := range 20 {
		r.Samples = append(r.Samples, stats.Sample{
			Offset: time.Second + time.Duration(i)*20*time.Millisecond,
			RTT:    base + time.Duration(i)*time.Millisecond,
		})
	}
	return r
}

// Build once, then render: here the reading of a two-repeat cell.
func ExampleBuild() {
	runs := []results.Run{
		tinyRun("tcp", 1, 80*time.Millisecond),
		tinyRun("tcp", 2, 81*time.Millisecond),
		tinyRun("quic", 1, 140*time.Millisecond),
		tinyRun("quic", 2, 142*time.Millisecond),
	}
	rep, err := report.Build(runs, report.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := rep.Cells[0]
	for _, a := range c.Arms {
		fmt.Printf("%s: p95 %.1f ms, spread %.1f ms over %d repeats\n", a.Arm, a.P95Ms, a.SpreadMs, a.Measured)
	}
	cp := c.Comparisons[0]
	fmt.Printf("%s: delta %+.1f ms, threshold %.1f ms: %s\n", c.Label(), cp.DeltaMs, cp.ThresholdMs, cp.Reading)
	// Output:
	// tcp: p95 98.5 ms, spread 1.0 ms over 2 repeats
	// quic: p95 159.0 ms, spread 2.0 ms over 2 repeats
	// 80 ms / 10 Mbit, 1% loss, reno: delta +60.5 ms, threshold 2.0 ms: QUIC worse
}
