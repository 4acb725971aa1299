package main

import (
	"context"
	"fmt"
	"io"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/stats"
	"github.com/shakenfist/quicbench/transport"
)

// headlineConfig is the headline's QUIC arms in virtual time: the
// profile, the repeats, the workload and the QUIC packet size.
type headlineConfig struct {
	profile    shapedlink.Profile
	repeats    int
	workload   spicelike.Config
	packetSize int
	seed       uint64
}

// headlineArms are the arms compared, the second read against the first.
var headlineArms = []transport.Arm{transport.ArmQUIC, transport.ArmQUICPerChannel}

// headline runs the arms interleaved, each repeat over a fresh in-process
// link in one synctest bubble, and writes each arm's cell, the verdict and
// how long it took on the clock and in virtual time. t is outside the
// bubble, so the wall time is the machine's.
func headline(t *testing.T, w io.Writer, c headlineConfig) error {
	wallStart := time.Now()
	repeats := map[transport.Arm][]stats.Repeat{}
	var virtual time.Duration
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		for r := range c.repeats {
			for _, arm := range headlineArms {
				repeats[arm] = append(repeats[arm], headlineRun(t, c, arm, c.seed+uint64(r)))
			}
		}
		virtual = time.Since(start)
	})
	wall := time.Since(wallStart)
	fmt.Fprintf(w, "%s, arms %s and %s, %d repeats of %v (warm-up %v), %d-byte QUIC packets, in virtual time\n",
		c.profile, headlineArms[0], headlineArms[1], c.repeats, c.workload.Duration, c.workload.Warmup, c.packetSize)
	cells := map[transport.Arm]stats.Cell{}
	unmeasured := 0
	for _, arm := range headlineArms {
		cell, err := stats.SummariseCell(repeats[arm], c.workload.Warmup)
		if err != nil {
			return fmt.Errorf("%s: %w", arm, err)
		}
		cells[arm] = cell
		unmeasured += c.repeats - cell.Measured
		fmt.Fprintf(w, "  %-17s p50 %s  p95 %s (repeats %s to %s, spread %s)  bulk %.2f Mbit/s  measured %d of %d\n", arm,
			ms(cell.P50), ms(cell.P95), ms(cell.P95Min), ms(cell.P95Max), ms(cell.Spread), cell.Throughput.Median, cell.Measured, c.repeats)
	}
	cmp, err := stats.Compare(cells[headlineArms[0]], cells[headlineArms[1]])
	if err != nil {
		return fmt.Errorf("comparing: %w", err)
	}
	fmt.Fprintf(w, "  verdict: %s against %s is %s (p95 delta %s, threshold %s)\n",
		headlineArms[1], headlineArms[0], cmp.Verdict, ms(cmp.Delta), ms(cmp.Threshold))
	fmt.Fprintf(w, "  took %v of virtual time in %v of wall time\n", virtual.Round(time.Millisecond), wall.Round(time.Millisecond))
	if unmeasured > 0 {
		return fmt.Errorf("%d of %d repeats were not measured (the log above says why)", unmeasured, c.repeats*len(headlineArms))
	}
	return nil
}

// headlineRun is one repeat of one arm over a fresh link, closed at once.
func headlineRun(t *testing.T, c headlineConfig, arm transport.Arm, seed uint64) stats.Repeat {
	link, err := shapedlink.New(context.Background(), c.profile, shapedlink.Options{Backend: shapedlink.BackendInProcess, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	r, err := measure.Run(context.Background(), measure.OverLink(link), measure.Transport(arm), c.workload, transport.Options{PacketSize: c.packetSize})
	if err != nil {
		t.Logf("%s (seed %d): %v", arm, seed, err)
	}
	return r.Repeat
}
