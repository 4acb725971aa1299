package main

import (
	"fmt"

	"github.com/shakenfist/quicbench/measure/singleflow"
)

// The flows the command compares by default, and what each pins, as
// results.json records them.
func Example_flows() {
	for _, f := range flowsOf(singleflow.DefaultFlows()) {
		fmt.Printf("%s: arm %s, controller %q\n", f.Name, f.Arm, f.CC)
	}
	// Output:
	// quic: arm quic, controller ""
	// tcp-quicreno: arm tcp, controller "quicreno"
	// tcp-reno: arm tcp, controller "reno"
	// tcp-cubic: arm tcp, controller "cubic"
}
