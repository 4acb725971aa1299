package bench_test

import (
	"context"
	"log"
	"os"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/bench"
	"github.com/shakenfist/quicbench/measure/plan"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
)

// A matrix planned in package plan runs here, each run on a fresh link on
// this machine (as root); run again, it resumes.
func ExampleRun() {
	bench.MaybeRunRole() // in a run's server or client process: be it, and exit
	p, err := shapedlink.ParseProfile("80:10")
	if err != nil {
		log.Fatal(err)
	}
	m := &plan.Matrix{
		Profiles: []shapedlink.Profile{p}, Losses: []float64{1}, CCs: []string{plan.MatchedCC},
		Arms: []measure.Arm{"tcp", "quic"}, Repeats: 2, Workload: spicelike.Defaults(), Workdir: "results/example",
	}
	if err := bench.Run(context.Background(), m, bench.Options{Progress: os.Stderr}); err != nil {
		log.Fatal(err)
	}
}
