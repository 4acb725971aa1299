package summary_test

import (
	"fmt"

	"github.com/shakenfist/quicbench/measure/spicelive/summary"
)

// A samples directory is cited by its name under docs/results.
func ExampleResultsName() {
	fmt.Println(summary.ResultsName("docs/results/spicelive-cc-8010"))
	fmt.Println(summary.ResultsName("/tmp/mine"))
	// Output:
	// spicelive-cc-8010
	// mine
}

// The figures a committed samples directory holds, recomputed: at 30 ms /
// 50 Mbit behind one BDP beside a cubic download, each arm's key-to-draw
// p95 (the median of its repeats' p95s) and whether it met the key goal.
func ExampleVerdictsFromSamples() {
	v, err := summary.VerdictsFromSamples("../../../docs/results/paths-3050")
	if err != nil {
		fmt.Println(err)
		return
	}
	const cell = "30ms-50mbit_loss0_reno_limit188_down.cross-1xcubic" // the cell's directory name
	for _, arm := range []string{"tcp", "tcp-cubic", "tcp-bbr", "quic"} {
		if a, ok := v.Arm(cell, arm); ok {
			fmt.Printf("%s: p95 %.0f ms over %d keys, goal met %v\n", arm, a.Draw.P95.Seconds()*1000, a.Keys, a.MeetsGoal())
		}
	}
	// Output:
	// tcp: p95 74 ms over 414 keys, goal met true
	// tcp-cubic: p95 424 ms over 414 keys, goal met false
	// tcp-bbr: p95 103 ms over 414 keys, goal met true
	// quic: p95 1178 ms over 414 keys, goal met false
}
