package pathchange_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/shakenfist/quicbench/measure/pathchange"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

// Five repeats of each arm over 80 ms / 10 Mbit without loss, the client
// moving 10 s into a 20 s session, the old address removed first. It
// needs root, or Prepare to get a user namespace, and MaybeRunRole first
// thing in main.
func ExampleRun() {
	p, err := shapedlink.ParseProfile("80:10")
	if err != nil {
		fmt.Println(err)
		return
	}
	w := spicelike.Defaults()
	w.Duration, w.Warmup = 20*time.Second, 2*time.Second
	cfg := pathchange.Config{
		Profile: p, Losses: []float64{0}, Arms: []transport.Arm{transport.ArmTCP, transport.ArmQUIC}, Repeats: 5,
		Workload: w, Linger: 5 * time.Second, Workdir: "results/pathchange", Progress: os.Stderr,
		Change: pathchange.Change{At: 10 * time.Second, Order: pathchange.OrderBreakFirst, ProbeTimeout: 5 * time.Second},
	}
	res, err := pathchange.Run(context.Background(), cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(res.Summary)
	if line := pathchange.Failures(res.Records); line != "" {
		fmt.Println(line)
	}
}

// The line a command prints when some runs could not be measured.
func ExampleFailures() {
	c := results.Cell{Profile: "80:10", RTTms: 80, RateMbit: 10, LossPct: 1, CC: "reno"}
	recs := []pathchange.Record{
		{Cell: c, Arm: "tcp", Repeat: 1},
		{Cell: c, Arm: "quic", Repeat: 1, Failed: "the client could not connect"},
	}
	fmt.Println(pathchange.Failures(recs))
	// Output:
	// 1 of 2 measurements failed (loss 1% quic r1)
}
