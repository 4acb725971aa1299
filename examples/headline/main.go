package main

import (
	"os"
	"time"

	"github.com/shakenfist/quicbench/examples/internal/gorun"
	"github.com/shakenfist/quicbench/measure/benchcmd"
	"github.com/shakenfist/quicbench/measure/plan"
	"github.com/shakenfist/quicbench/stats"
)

// defaults is the matrix the command runs; quick is its -quick preset: the
// one cell where the full matrix's verdict is decided (80 ms / 10 Mbit, 1%
// loss), three repeats of 30 s each, about three minutes (183-185 s). Its
// reading is the full matrix's in docs/headline.md, and the quick run says
// whether it found the same.
var (
	defaults = benchcmd.Defaults{
		Profiles: "80:10 150:2", Losses: "0 1 2", CCs: plan.MatchedCC, Arms: "tcp quic",
		Repeats: 5, Duration: 45 * time.Second, Warmup: 5 * time.Second, Workdir: "results/headline",
	}
	quick = benchcmd.Defaults{
		Profiles: "80:10", Losses: "1", Repeats: 3, Duration: 30 * time.Second, Warmup: 5 * time.Second,
		Workdir: "results/quick",
		Readings: []benchcmd.Reading{{
			Cell: "80ms-10mbit_loss1_reno", A: "tcp", B: "quic",
			Verdict: stats.Worse, DeltaMs: 61.5, ThresholdMs: 12.0, Source: "docs/headline.md",
		}},
	}
)

func main() {
	gorun.Follow()
	os.Exit(benchcmd.Main("headline",
		"Five SPICE-shaped channels as five TCP connections (tcp) against one QUIC connection with five streams (quic), "+
			"per profile, loss level and TCP congestion control, interleaved.",
		defaults,
		quick,
		nil))
}
