// Command echosizes is a matrix command of this module's own: tcp against
// quic with the interactive echo's size as an axis (-echo-sizes).
package main

import (
	"os"
	"time"

	"example.com/armoutside"
	"github.com/shakenfist/quicbench/measure/benchcmd"
	"github.com/shakenfist/quicbench/measure/plan"
)

var (
	defaults = benchcmd.Defaults{
		Profiles: "80:10", Losses: "0 1", CCs: plan.MatchedCC, Arms: "tcp quic",
		Repeats: 3, Duration: 30 * time.Second, Warmup: 5 * time.Second, Workdir: "results/echosizes",
		Axes: []benchcmd.AxisFlag{armoutside.EchoSizesFlag("64 1024 8192")},
	}
	quick = benchcmd.Defaults{
		Profiles: "80:10", Losses: "1", Repeats: 2, Duration: 10 * time.Second, Warmup: 3 * time.Second,
		Workdir: "results/echosizes-quick",
	}
)

func main() {
	os.Exit(benchcmd.Main("echosizes", "tcp against quic, one cell per size of the interactive echo.", defaults, quick, nil))
}
