package fallback_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/fallback"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/transport"
)

// Ten connects per arm over 80 ms / 10 Mbit, then the summary of every
// record in the work directory. It needs root, or Prepare to get a user
// namespace, and MaybeRunRole first thing in main.
func ExampleRun() {
	p, err := shapedlink.ParseProfile("80:10")
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := fallback.Config{Profiles: []shapedlink.Profile{p}, Arms: fallback.Arms(), Connects: 10, Channels: 5,
		GiveUp: transport.DefaultFallbackGiveUp, Gap: 300 * time.Millisecond, Workdir: "results/fallback", Progress: os.Stderr}
	if _, err := fallback.Run(context.Background(), cfg); err != nil {
		fmt.Println(err)
		return
	}
	recs, err := fallback.Load(cfg.Workdir)
	if err == nil {
		err = fallback.Summarise(os.Stdout, recs)
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	if line := fallback.Failures(recs); line != "" {
		fmt.Println(line)
	}
}

// The summary of two arms, made from records written by hand.
func ExampleSummarise() {
	ms := func(v float64) time.Duration { return time.Duration(v * float64(time.Millisecond)) }
	tcp := fallback.Record{Schema: 1, Profile: "80:10", Arm: measure.TCP, Connects: 3}
	for _, v := range []float64{81, 80.5, 82} {
		tcp.Results = append(tcp.Results, fallback.Connect{Elapsed: ms(v), Arm: transport.ArmTCP})
	}
	blocked := fallback.Record{Schema: 1, Profile: "80:10", Arm: "fallback-blocked", Connects: 3, GiveUp: ms(400),
		UDPBlocked: &fallback.Dropped{Packets: 12}}
	for _, v := range []float64{482, 484, 481} {
		blocked.Results = append(blocked.Results, fallback.Connect{Elapsed: ms(v), Arm: transport.ArmTCP,
			Fallback: &transport.FallbackResult{QUICOutcome: transport.QUICGaveUp, TCPTried: true,
				TCPStarted: ms(401), Ready: ms(v)}})
	}
	if err := fallback.Summarise(os.Stdout, []fallback.Record{blocked, tcp}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// | profile | arm | connects ok | median ms | min–max ms | vs tcp median ms | QUIC used / failed / gave up | session over quic / tcp | UDP dropped (packets) |
	// |---|---|---|---|---|---|---|---|---|
	// | 80:10 | tcp | 3/3 | 81.0 | 80.5–82.0 |  |  | 0 / 3 |  |
	// | 80:10 | fallback-blocked | 3/3 | 482.0 | 481.0–484.0 | +401.0 | 0 / 0 / 3 | 0 / 3 | 12 |
	//
	// | profile | arm | give-up | TCP started, median (min–max) ms | TCP part, median (min–max) ms |
	// |---|---|---|---|---|
	// | 80:10 | fallback-blocked | 400ms | 401.0 (401.0–401.0) | 81.0 (80.0–83.0) |
}
