package singleflow_test

import (
	"fmt"

	"github.com/shakenfist/quicbench/measure/singleflow"
)

// Compare applies the project's rule to two flows' goodputs: the
// difference of medians against the wider spread.
func ExampleCompare() {
	rs := []singleflow.Result{
		{Profile: "80:10", Loss: 1, Flow: "quic", GoodputMbit: 2.0},
		{Profile: "80:10", Loss: 1, Flow: "quic", GoodputMbit: 2.4},
		{Profile: "80:10", Loss: 1, Flow: "quic", GoodputMbit: 2.2},
		{Profile: "80:10", Loss: 1, Flow: "tcp-quicreno", GoodputMbit: 2.1},
		{Profile: "80:10", Loss: 1, Flow: "tcp-quicreno", GoodputMbit: 2.3},
		{Profile: "80:10", Loss: 1, Flow: "tcp-quicreno", GoodputMbit: 1.9},
	}
	for _, m := range singleflow.Compare(singleflow.Summarise(rs), "tcp-quicreno", "quic") {
		fmt.Printf("%s %g%%: %+.2f Mbit/s, threshold %.2f, within %v\n", m.Profile, m.Loss, m.Delta, m.Threshold, m.Within)
	}
	// Output:
	// 80:10 1%: -0.10 Mbit/s, threshold 0.40, within true
}
