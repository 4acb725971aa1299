package benchcmd_test

import (
	"fmt"
	"time"

	"github.com/shakenfist/quicbench/measure/benchcmd"
)

// A command's defaults say what its matrix is, and how many runs it makes;
// Main makes them its flags' defaults.
func ExampleDefaults() {
	d := benchcmd.Defaults{Profiles: "80:10", Losses: "0 1", CCs: "reno", Arms: "tcp quic",
		Repeats: 5, Duration: 45 * time.Second, Warmup: 5 * time.Second, Workdir: "results/mine"}
	fmt.Println(d)
	// Output: profiles "80:10", losses "0 1", ccs "reno", arms "tcp quic", 5 repeats of 45s (5s warm-up): 20 runs into results/mine
}
