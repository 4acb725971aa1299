package main

import (
	"os"
	"slices"
	"time"

	"github.com/shakenfist/quicbench/examples/internal/gorun"
	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/benchcmd"
	"github.com/shakenfist/quicbench/measure/plan"
)

// defaults is the matrix the command runs; quick is its -quick preset.
var (
	defaults = benchcmd.Defaults{
		Profiles: "80:10", Losses: "0 1 2", CCs: plan.MatchedCC, Arms: "tcp quic quic-priority",
		Repeats: 5, Duration: 45 * time.Second, Warmup: 5 * time.Second, Workdir: "results/priority",
	}
	quick = benchcmd.Defaults{
		Profiles: "80:10", Losses: "1", Repeats: 3, Duration: 15 * time.Second, Warmup: 5 * time.Second,
		Workdir: "results/priority-quick",
	}
)

func main() {
	gorun.Follow()
	os.Exit(benchcmd.Main("priority",
		"The quic arm with and without a send priority on the interactive stream, beside tcp, interleaved in one run.",
		defaults,
		quick,
		func(m *plan.Matrix) error {
			prio := measure.QUICPriority
			if !slices.Contains(m.Arms, prio) {
				m.Arms = append(m.Arms, prio)
			}
			return nil
		}))
}
