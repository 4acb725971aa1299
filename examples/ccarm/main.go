package main

import (
	"errors"
	"os"
	"time"

	"github.com/shakenfist/quicbench/examples/internal/gorun"
	"github.com/shakenfist/quicbench/measure/benchcmd"
	"github.com/shakenfist/quicbench/measure/plan"
)

// defaults is the matrix the command runs; quick is its -quick preset.
var (
	defaults = benchcmd.Defaults{
		Profiles: "80:10 150:2", Losses: "0 1 2", CCs: "reno cubic bbr", Arms: "tcp quic",
		Repeats: 5, Duration: 45 * time.Second, Warmup: 5 * time.Second, Workdir: "results/ccarm",
	}
	quick = benchcmd.Defaults{
		Profiles: "80:10", Losses: "1", Repeats: 3, Duration: 15 * time.Second, Warmup: 5 * time.Second,
		Workdir: "results/ccarm-quick",
	}
)

func main() {
	gorun.Follow()
	os.Exit(benchcmd.Main("ccarm",
		"The tcp arm with reno, cubic and bbr, the quic arm (quic-go NewReno) for reference; non-reno cells are sensitivity cells.",
		defaults,
		quick,
		func(m *plan.Matrix) error {
			for _, cc := range m.CCs {
				if cc != plan.MatchedCC {
					return nil
				}
			}
			return errors.New("ccarm needs at least one congestion control besides reno (e.g. -ccs \"reno cubic bbr\"); for reno alone use examples/headline")
		}))
}
