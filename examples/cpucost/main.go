package main

import (
	"os"
	"time"

	"github.com/shakenfist/quicbench/examples/internal/gorun"
	"github.com/shakenfist/quicbench/measure/benchcmd"
	"github.com/shakenfist/quicbench/measure/plan"
)

// defaults is the matrix the command runs; quick is its -quick preset.
var (
	defaults = benchcmd.Defaults{
		Profiles: "80:10 150:2 20:100 5:1000", Losses: "0", CCs: plan.MatchedCC, Arms: "tcp quic quic-per-channel",
		Repeats: 3, Duration: 20 * time.Second, Warmup: 5 * time.Second, Workdir: "results/cpucost",
	}
	quick = benchcmd.Defaults{
		Profiles: "20:100", Losses: "0", Repeats: 2, Duration: 10 * time.Second, Warmup: 3 * time.Second,
		Workdir: "results/cpucost-quick",
	}
)

func main() {
	gorun.Follow()
	os.Exit(benchcmd.Main("cpucost",
		"CPU time per MB and peak RSS of server and client, per arm, at 80:10, 150:2, 20:100 and 5:1000 without loss.",
		defaults,
		quick,
		nil))
}
