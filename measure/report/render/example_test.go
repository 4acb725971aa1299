package render_test

import (
	"fmt"
	"os"
	"time"

	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/report/render"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/stats"
)

// tinyRun is a run whose 20 round trips after a 1 s warm-up are base,
// base+1ms, ..., base+19ms, so its p95 is base+18ms.
func tinyRun(arm string, repeat int, base time.Duration) results.Run {
	r := results.Run{
		Schema: results.SchemaVersion,
		Cell:   results.Cell{Profile: "80:10", RTTms: 80, RateMbit: 10, LossPct: 1, CC: "reno"},
		Arm:    arm, Repeat: repeat, Warmup: time.Second,
		ThroughputMbit: 1.5, ConnectTime: 84 * time.Millisecond,
		Link: results.Link{Backend: "emulator", Applied: []string{"delay 40ms rate 10mbit loss 1% limit 110"}, Limit: 110},
	}
	for i := range 20 {
		r.Samples = append(r.Samples, stats.Sample{
			Offset: time.Second + time.Duration(i)*20*time.Millisecond,
			RTT:    base + time.Duration(i)*time.Millisecond,
		})
	}
	return r
}

// The whole summary as markdown, for a cell of one tcp and one quic run.
// One repeat per arm has no spread to speak of, so the reading is
// unresolved whatever the delta, and the QUIC arm, having recorded no
// offload evidence, is listed under the warnings.
func ExampleMarkdown() {
	runs := []results.Run{
		tinyRun("tcp", 1, 80*time.Millisecond),
		tinyRun("quic", 1, 140*time.Millisecond),
	}
	if err := render.Markdown(os.Stdout, runs, report.Options{Source: "/tmp/results"}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// # quicbench summary
	//
	// 2 runs from `/tmp/results` in 1 cell.
	// The first 1 s of every run is discarded as warm-up, as the runs recorded.
	//
	// All times are milliseconds. A cell's p50, p95 and p99 are the medians over repeats of each repeat's own nearest-rank percentile, never a percentile of pooled samples. The p95 spread is the highest minus the lowest repeat p95 in that cell and arm; the threshold for a reading is the wider of the two arms' spreads, and a delta that does not exceed it is unresolved.
	//
	// ## Interactive round trip, headline: kernel TCP reno
	//
	// Matched congestion control: kernel TCP pinned to reno.
	//
	// ### 80 ms / 10 Mbit
	//
	// | loss | arm | p50 | p95 | p99 | p95 spread | p95 range | samples/run | timeouts | repeats |
	// | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
	// | 1% | tcp | 89.0 | 98.0 | 99.0 | 0.0 | 98.0-98.0 | 20 | 0 | 1/1 |
	// | 1% | quic | 149.0 | 158.0 | 159.0 | 0.0 | 158.0-158.0 | 20 | 0 | 1/1 |
	//
	// ### Reading them: QUIC against TCP
	//
	// Delta is quic's median p95 minus tcp's (positive: quic slower). Beside the spread rule, and never instead of it: an order-statistic confidence interval for each arm's median p95, and a two-sided Mann-Whitney U test between the arms' repeat p95s.
	//
	// | profile | loss | delta | threshold | resolves as | tcp median p95 interval | quic median p95 interval | U-test p |
	// | --- | --- | --- | --- | --- | --- | --- | --- |
	// | 80 ms / 10 Mbit | 1% | +60.0 | 0.0 | unresolved† | 98.0-98.0 (0.0%)‡ | 158.0-158.0 (0.0%)‡ | 1.000§ |
	//
	// † a spread needs at least 2 repeats per arm (have 1 and 1).
	//
	// ‡ 1 repeats are too few for a 95% interval on the median (the range covers it with 0.0%); at least 6 are needed.
	//
	// § 1 against 1 values cannot reach p <= 0.05 (smallest possible p is 1.000).
	//
	// ## Throughput of the saturating channel
	//
	// Median over measured repeats, Mbit/s, with the range across repeats in brackets.
	//
	// | profile | loss | cc | tcp | quic |
	// | --- | --- | --- | --- | --- |
	// | 80 ms / 10 Mbit | 1% | reno | 1.50 (1.50-1.50) | 1.50 (1.50-1.50) |
	//
	// ## Connect time
	//
	// Time to open every channel, per profile and arm, pooled over loss levels and congestion-control settings: median, range in brackets, and the number of connects.
	//
	// | profile | tcp | quic |
	// | --- | --- | --- |
	// | 80 ms / 10 Mbit | 84.0 ms (84.0-84.0), n=1 | 84.0 ms (84.0-84.0), n=1 |
	//
	// ## Was segmentation offload off?
	//
	// Per QUIC cell, from the server's egress queue (bytes per queue slot over samples with at least two packets queued) and/or the egress-hook counters. The verdict is off only if every run said off; pooled mean is the range of the runs' pooled means; max is the largest bytes per slot any sample held. Off means no sample held more bytes than (packets + 1) x the expected size (a torn read of the packet and byte gauges cannot reach that) and no more than 2% of samples held more than packets x the expected size, so with offload off the max can sit a little above the expected size.
	//
	// | profile | loss | cc | arm | evidence | verdict | pooled mean | max | expected | samples used |
	// | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
	// | 80 ms / 10 Mbit | 1% | reno | quic | none recorded | not verified | - | - | - | - |
	//
	// ## Warnings
	//
	// Every cell and arm with a timed-out exchange, a repeat that could not be measured, offload not verified off on a QUIC arm, or anything else that stops a reading being taken at face value.
	//
	// - **80 ms / 10 Mbit, 1% loss, reno, quic** (gso): no GSO evidence (neither queue samples nor egress counters) in 1 of 1 runs (r1), so offload was not verified off there
	//
	// ## Host state and link
	//
	// The runs recorded no host state.
	//
	// Link backend: emulator; queue limit 110 packets. As applied for 80ms-10mbit_loss1_reno/tcp/r1:
	//
	// ```
	// delay 40ms rate 10mbit loss 1% limit 110
	// ```
}
