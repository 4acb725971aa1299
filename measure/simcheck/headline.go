package simcheck

import (
	"context"
	"errors"
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

// arms are the arms the headline compares, the second read against the
// first, by their names in measure's registry (the in-process link
// carries datagrams, so only QUIC arms run there).
func arms() []transport.Arm { return []transport.Arm{transport.ArmQUIC, transport.ArmQUICPerChannel} }

// HeadlineConfig is the headline's QUIC arms in virtual time.
type HeadlineConfig struct {
	Profile    shapedlink.Profile
	Repeats    int              // per arm, at least 2
	Workload   spicelike.Config // its Duration and Warmup are virtual time
	PacketSize int              // QUIC packet size, 1200 to 1452; above 1280 quic-go v0.65 cannot run in virtual time
	Seed       uint64           // repeat r's links are seeded Seed + r
}

// Headline is what RunHeadline measured.
type Headline struct {
	Config HeadlineConfig
	// Arms are the arms compared, the second read against the first;
	// empty when nothing ran.
	Arms []transport.Arm
	// Cells are the arms' cells, in Arms' order; shorter when one could
	// not be summarised (RunHeadline's error says why).
	Cells []stats.Cell
	// Comparison is the second arm's cell read against the first's, nil
	// when they could not be compared.
	Comparison *stats.Comparison
	// Virtual is the virtual time the repeats took, Wall the machine's.
	Virtual, Wall time.Duration
}

// RunHeadline runs the arms interleaved, each repeat over a fresh
// in-process link, all in one synctest bubble of t, and reads each arm's
// repeats into a cell and the cells into a comparison. A repeat that
// fails is logged on t and counts as unmeasured (Headline.Verdict). err
// says what in c (or a nil t) it cannot use, that ctx ended before every
// repeat ran, or why the repeats could not be summarised or compared;
// the Headline holds what was done until then.
func RunHeadline(ctx context.Context, t *testing.T, c HeadlineConfig) (Headline, error) {
	h := Headline{Config: c}
	if t == nil {
		return h, errors.New("simcheck: RunHeadline needs a test's *testing.T, for synctest's bubbles")
	}
	if err := c.validate(); err != nil {
		return h, err
	}
	h.Arms = arms()
	wallStart := time.Now()
	repeats := map[transport.Arm][]stats.Repeat{}
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		for r := range c.Repeats {
			if ctx.Err() != nil {
				break
			}
			for _, arm := range h.Arms {
				repeats[arm] = append(repeats[arm], headlineRun(t, c, arm, c.Seed+uint64(r)))
			}
		}
		h.Virtual = time.Since(start)
	})
	h.Wall = time.Since(wallStart)
	if err := ctx.Err(); err != nil {
		return h, fmt.Errorf("simcheck: the headline ended after %d of %d repeats: %w", len(repeats[h.Arms[0]]), c.Repeats, err)
	}
	for _, arm := range h.Arms {
		cell, err := stats.SummariseCell(repeats[arm], c.Workload.Warmup)
		if err != nil {
			return h, fmt.Errorf("%s: %w", arm, err)
		}
		h.Cells = append(h.Cells, cell)
	}
	cmp, err := stats.Compare(h.Cells[0], h.Cells[1])
	if err != nil {
		return h, fmt.Errorf("comparing: %w", err)
	}
	h.Comparison = &cmp
	return h, nil
}

// validate says what in c RunHeadline cannot use.
func (c HeadlineConfig) validate() error {
	var errs []error
	if c.Repeats < 2 {
		errs = append(errs, fmt.Errorf("simcheck: HeadlineConfig.Repeats %d: give at least 2, for the spread", c.Repeats))
	}
	if c.PacketSize < transport.MinPacketSize || c.PacketSize > transport.MaxPacketSize {
		errs = append(errs, fmt.Errorf("simcheck: HeadlineConfig.PacketSize %d: give %d to %d (%d in virtual time)",
			c.PacketSize, transport.MinPacketSize, transport.MaxPacketSize, transport.MaxVirtualPacketSize))
	}
	if err := c.Workload.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("simcheck: HeadlineConfig.Workload: %w", err))
	}
	return errors.Join(errs...)
}

// headlineRun is one repeat of one arm over a fresh link, closed at once.
func headlineRun(t *testing.T, c HeadlineConfig, arm transport.Arm, seed uint64) stats.Repeat {
	link, err := shapedlink.New(context.Background(), c.Profile, shapedlink.Options{Backend: shapedlink.BackendInProcess, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	a, err := measure.Lookup(string(arm))
	if err != nil {
		t.Fatal(err)
	}
	r, err := measure.Run(context.Background(), measure.OverLink(link), a, c.Workload, transport.Options{PacketSize: c.PacketSize})
	if err != nil {
		t.Logf("%s (seed %d): %v", arm, seed, err)
	}
	return r.Repeat
}

// Write writes each arm's cell, the verdict and the time taken, as far as
// h got.
func (h Headline) Write(w io.Writer) {
	if len(h.Arms) < 2 {
		return
	}
	c := h.Config
	fmt.Fprintf(w, "%s, arms %s and %s, %d repeats of %v (warm-up %v), %d-byte QUIC packets, in virtual time\n",
		c.Profile, h.Arms[0], h.Arms[1], c.Repeats, c.Workload.Duration, c.Workload.Warmup, c.PacketSize)
	for i, cell := range h.Cells {
		fmt.Fprintf(w, "  %-17s p50 %s  p95 %s (repeats %s to %s, spread %s)  bulk %.2f Mbit/s  measured %d of %d\n", h.Arms[i],
			ms(cell.P50), ms(cell.P95), ms(cell.P95Min), ms(cell.P95Max), ms(cell.Spread), cell.Throughput.Median, cell.Measured, c.Repeats)
	}
	if h.Comparison == nil {
		return
	}
	cmp := h.Comparison
	fmt.Fprintf(w, "  verdict: %s against %s is %s (p95 delta %s, threshold %s)\n",
		h.Arms[1], h.Arms[0], cmp.Verdict, ms(cmp.Delta), ms(cmp.Threshold))
	fmt.Fprintf(w, "  took %v of virtual time in %v of wall time\n", h.Virtual.Round(time.Millisecond), h.Wall.Round(time.Millisecond))
}

// Verdict says how many repeats were not measured, or nil when every one
// was.
func (h Headline) Verdict() error {
	unmeasured := 0
	for _, cell := range h.Cells {
		unmeasured += h.Config.Repeats - cell.Measured
	}
	if unmeasured > 0 {
		return fmt.Errorf("%d of %d repeats were not measured (the log above says why)", unmeasured, h.Config.Repeats*len(h.Arms))
	}
	return nil
}
