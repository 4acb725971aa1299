package results_test

import (
	"fmt"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
)

func ExampleRunDir() {
	c := results.Cell{Profile: "150:2", RTTms: 150, RateMbit: 2, LossPct: 0.5, CC: "reno"}
	fmt.Println(c.Title())
	fmt.Println(results.RunDir("results/headline", c, "quic", 3))
	// Output:
	// 150 ms / 2 Mbit
	// results/headline/150ms-2mbit_loss0.5_reno/quic/r3
}

// A record made by a tool of one's own is checked as every reader checks
// one: here a run whose finish comes before its start, and whose path
// probe answered more pings than it sent.
func ExampleRun_Validate() {
	c := results.Cell{Profile: "80:10", RTTms: 80, RateMbit: 10, LossPct: 1, CC: "reno"}
	r := results.NewRun(c, "tcp", false, 1, 30*time.Second, 5*time.Second)
	r.Started = time.Date(2026, 12, 8, 9, 0, 30, 0, time.UTC)
	r.Finished = time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC)
	r.Link.Probe = &results.PathProbe{Sent: 50, Answered: 51}
	fmt.Println(r.Validate())
	// Output:
	// finished 2026-12-08 09:00:00 +0000 UTC is not after started 2026-12-08 09:00:30 +0000 UTC
	// the path probe's figures are impossible (50 sent, 51 answered, loss 0%, round trips [0 0 0 0])
}
