package plan_test

import (
	"fmt"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/plan"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
)

// The arms are interleaved within each repeat of a cell, so drift on the
// machine hits them alike.
func ExampleMatrix_Plan() {
	p, _ := shapedlink.ParseProfile("80:10")
	m := &plan.Matrix{
		Profiles: []shapedlink.Profile{p}, Losses: []float64{0, 1}, CCs: []string{"reno"},
		Arms: []measure.Arm{"tcp", "quic"}, Repeats: 2, Workload: spicelike.Defaults(), Workdir: "results",
	}
	for _, rc := range m.Plan() {
		fmt.Println(rc.Cell.Dir(), rc.Arm, rc.Repeat, rc.Profile)
	}
	// Output:
	// 80ms-10mbit_loss0_reno tcp 1 80:10
	// 80ms-10mbit_loss0_reno quic 1 80:10
	// 80ms-10mbit_loss0_reno tcp 2 80:10
	// 80ms-10mbit_loss0_reno quic 2 80:10
	// 80ms-10mbit_loss1_reno tcp 1 80:10:1
	// 80ms-10mbit_loss1_reno quic 1 80:10:1
	// 80ms-10mbit_loss1_reno tcp 2 80:10:1
	// 80ms-10mbit_loss1_reno quic 2 80:10:1
}

// A matrix's own axis: each value is a cell of its own, named in its
// directory, and sets what it changes in every run of that cell.
func ExampleNewAxis() {
	p, _ := shapedlink.ParseProfile("80:10")
	gaps := []string{"20ms", "5ms"}
	m := &plan.Matrix{
		Profiles: []shapedlink.Profile{p}, Losses: []float64{1}, CCs: []string{"reno"},
		Arms: []measure.Arm{"tcp", "quic"}, Repeats: 1, Workload: spicelike.Defaults(), Workdir: "results",
		Axes: []plan.Axis{plan.NewAxis("gap", gaps, func(r *plan.Run, v string) {
			r.Workload.EchoGap, _ = time.ParseDuration(v)
		})},
	}
	for _, rc := range m.Plan() {
		fmt.Println(rc.Dir(), rc.Workload.EchoGap)
	}
	// Output:
	// results/80ms-10mbit_loss1_reno_gap-20ms/tcp/r1 20ms
	// results/80ms-10mbit_loss1_reno_gap-20ms/quic/r1 20ms
	// results/80ms-10mbit_loss1_reno_gap-5ms/tcp/r1 5ms
	// results/80ms-10mbit_loss1_reno_gap-5ms/quic/r1 5ms
}
