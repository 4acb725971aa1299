package benchcmd_test

import (
	"flag"
	"fmt"
	"time"

	"github.com/shakenfist/quicbench/measure/benchcmd"
)

// A command's defaults become its flags' defaults; the flags' help is
// built from them.
func ExampleNewFlags() {
	fs := flag.NewFlagSet("mybench", flag.ContinueOnError)
	d := benchcmd.Defaults{Profiles: "80:10", Losses: "0 1", CCs: "reno", Arms: "tcp quic",
		Repeats: 5, Duration: 45 * time.Second, Warmup: 5 * time.Second, Workdir: "results/mine"}
	benchcmd.NewFlags(fs, d, d)
	fmt.Println(fs.Lookup("losses").DefValue, "|", fs.Lookup("arms").DefValue)
	// Output: 0 1 | tcp quic
}
