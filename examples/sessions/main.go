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
		Profiles: "80:10", Losses: "0 1", CCs: plan.MatchedCC, Arms: "tcp quic quic-per-channel",
		Repeats: 3, Duration: 30 * time.Second, Warmup: 5 * time.Second, Workdir: "results/sessions",
		Axes: []benchcmd.AxisFlag{benchcmd.SessionsFlag("1 2 4 8")},
	}
	quick = benchcmd.Defaults{
		Profiles: "80:10", Losses: "1", Repeats: 2, Duration: 10 * time.Second, Warmup: 3 * time.Second,
		Workdir: "results/sessions-quick",
	}
)

func main() {
	gorun.Follow()
	os.Exit(benchcmd.Main("sessions",
		"N sessions of five channels sharing one link: tcp (5N connections), quic (one connection per session) "+
			"and quic-per-channel (5N connections), one cell per N.",
		defaults,
		quick,
		nil))
}
