package calibrate_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/calibrate"
)

// Calibrate one profile with short flows and print the table. Building
// links needs root (or shapedlink.Reexec), so this example only compiles.
func ExampleRun() {
	p, err := shapedlink.ParseProfile("80:10:1")
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := calibrate.DefaultConfig()
	cfg.Profiles, cfg.SweepRates = []shapedlink.Profile{p}, nil
	cfg.Echoes, cfg.Bulk, cfg.LossPackets = 50, 3*time.Second, 1000
	rep, err := calibrate.Run(context.Background(), cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := calibrate.WriteTable(os.Stdout, rep); err != nil {
		fmt.Println(err)
	}
	if failed, total := rep.Failures(); len(failed) > 0 {
		fmt.Println(calibrate.FailureLine(failed, total))
	}
}

// Render a report: here a queue discipline measured beside drop-tail.
func ExampleWriteTable() {
	rep := calibrate.Report{
		Started: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC), Host: "bench-1", Load: "0.10 0.20 0.30 1/99 42", Offload: "wire",
		Qdisc: []calibrate.Qdisc{
			{Discipline: "fifo", Profile: "80:10", FlowMbit: 9.4, StandingP50Ms: 61.2, StandingP95Ms: 70.8, SparseP50Ms: 60.5, SparseP95Ms: 71, Echoes: 600, EchoesSent: 600, LimitDrops: 12},
			{Discipline: "fq_codel", Profile: "80:10,qdisc=fq_codel", FlowMbit: 9.3, StandingP50Ms: 4.1, StandingP95Ms: 9.9, SparseP50Ms: 0.4, SparseP95Ms: 1.2, Echoes: 600, EchoesSent: 600, CoDelDrops: 30},
		},
	}
	if err := calibrate.WriteTable(os.Stdout, rep); err != nil {
		fmt.Println(err)
	}
	failed, total := rep.Failures()
	fmt.Printf("%d of %d failed\n", len(failed), total)
	// Output:
	// calibrate 2026-03-04T05:06:07Z on bench-1, load 0.10 0.20 0.30 1/99 42, offload wire
	//
	//      qdisc               profile  flow Mbit/s  standing p50     p95  sparse +p50    +p95   echoes  drops (limit/queue/codel)  marks
	//       fifo                 80:10         9.40        61.200  70.800       60.500  71.000  600/600                     12/0/0      0
	//   fq_codel  80:10,qdisc=fq_codel         9.30         4.100   9.900        0.400   1.200  600/600                     0/0/30      0
	// standing: the wait for the rate at the down queue, from the shaper's held bytes every 10 ms; sparse: echoes 10 ms apart beside the flow, round trip beyond the configured one; ms
	// 0 of 2 failed
}

// Loss of 40 in 4000 datagrams is 1.00%, and its 95% Wilson interval
// holds a configured 1%.
func ExampleWilson() {
	lo, hi := calibrate.Wilson(40, 4000)
	fmt.Printf("[%.2f%%, %.2f%%]\n", lo*100, hi*100)
	// Output:
	// [0.74%, 1.36%]
}
