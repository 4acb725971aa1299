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
		Profiles: "80:10", Losses: "0 1 2", CCs: plan.MatchedCC, Arms: "tcp quic",
		Repeats: 3, Duration: 30 * time.Second, Warmup: 5 * time.Second, Workdir: "results/capped",
		Axes: []benchcmd.AxisFlag{benchcmd.CapsFlag("0 0.5 0.8")},
	}
	quick = benchcmd.Defaults{
		Profiles: "80:10", Losses: "1", Repeats: 2, Duration: 10 * time.Second, Warmup: 3 * time.Second,
		Workdir: "results/capped-quick",
	}
)

func main() {
	gorun.Follow()
	os.Exit(benchcmd.Main("capped",
		"The headline arms with the display channel capped below the link rate: tcp against quic, one cell per cap (0 is uncapped).",
		defaults,
		quick,
		nil))
}
