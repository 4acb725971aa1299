package singleflow_test

import (
	"fmt"

	"github.com/shakenfist/quicbench/measure/singleflow"
)

// The summary of two flows' goodputs: each cell's median and spread, and
// the project's rule applied to them, the difference of medians against
// the wider spread.
func ExampleMarkdown() {
	rs := []singleflow.Result{
		{Profile: "80:10", Loss: 1, Flow: "quic", GoodputMbit: 2.0},
		{Profile: "80:10", Loss: 1, Flow: "quic", GoodputMbit: 2.4},
		{Profile: "80:10", Loss: 1, Flow: "quic", GoodputMbit: 2.2},
		{Profile: "80:10", Loss: 1, Flow: "tcp-quicreno", GoodputMbit: 2.1},
		{Profile: "80:10", Loss: 1, Flow: "tcp-quicreno", GoodputMbit: 2.3},
		{Profile: "80:10", Loss: 1, Flow: "tcp-quicreno", GoodputMbit: 1.9},
	}
	fmt.Print(singleflow.Markdown(singleflow.Summarise(rs), "tcp-quicreno", "quic"))
	// Output:
	// | profile | loss | flow | runs | goodput Mbit/s (min-max) | spread | window after loss / before (episodes) | initial window, packets | first RTT, KB (link cap) |
	// |---|---|---|---|---|---|---|---|---|
	// | 80:10 | 1% | quic | 3 | 2.20 (2.00-2.40) | 0.40 | - | 0 | 0.0 (0.0) |
	// | 80:10 | 1% | tcp-quicreno | 3 | 2.10 (1.90-2.30) | 0.40 | - | 0 | 0.0 (0.0) |
	//
	// tcp-quicreno against quic (goodput, median of runs; threshold = the wider spread):
	//
	// | profile | loss | delta Mbit/s | threshold | within spread | inside ref's range |
	// |---|---|---|---|---|---|
	// | 80:10 | 1% | -0.10 | 0.40 | yes | yes |
}

// The flows compared by default, and what each pins, as the record names
// them.
func ExampleRecordedFlows() {
	for _, f := range singleflow.RecordedFlows(singleflow.DefaultFlows()) {
		fmt.Printf("%s: arm %s, controller %q\n", f.Name, f.Arm, f.CC)
	}
	// Output:
	// quic: arm quic, controller ""
	// tcp-quicreno: arm tcp, controller "quicreno"
	// tcp-reno: arm tcp, controller "reno"
	// tcp-cubic: arm tcp, controller "cubic"
}
