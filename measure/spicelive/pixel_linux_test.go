package spicelive

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/spicelive/internal/livetest"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/spicelive/keydraw"
	"github.com/shakenfist/quicbench/measure/spicelive/xsession"
)

// TestLivePixelWithDisplay runs a short live session with key-to-pixel
// and the images workload over a 2 Mbit/s link, on which keys are drawn
// late and overlap: keys must be attributed by glyph, some timed to both
// their pixels and their draw, none early, and every key drawn at the
// tunnel must have its pixels change.
func TestLivePixelWithDisplay(t *testing.T) {
	if testing.Short() {
		t.Skip("a live session; -short skips it")
	}
	livetest.Need(t)
	if miss := xsession.DisplayMissing(); miss != "" {
		t.Skip("no display workload here: " + miss)
	}
	if left := ours(t); len(left) > 0 {
		t.Skipf("a live session's programs are already running here: %v", left)
	}
	c := smokeConfig(t, "20:2", measure.TCP)
	c.Duration, c.Warmup, c.Pixel = 20*time.Second, 3*time.Second, true
	if err := c.setDisplay(xsession.DisplayImages); err != nil {
		t.Fatal(err)
	}
	c.KeyTimeout = 8 * time.Second
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var progress bytes.Buffer
	if err := Run(context.Background(), c, &progress, log); err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	cell, _, _ := c.cell("20:2")
	dir := results.RunDir(c.ReadingDir(ReadingLive), cell, string(measure.TCP), 1)
	var rec LiveRecord
	if err := results.ReadJSON(filepath.Join(dir, LiveFile), &rec); err != nil {
		t.Fatal(err)
	}
	p := rec.Pixel
	if p == nil || p.Method != keydraw.MethodGlyph {
		t.Fatalf("key-to-pixel %+v, want it read by glyph", p)
	}
	for i, k := range p.Keys {
		if k.Draw >= 0 && k.Pixel < 0 {
			t.Errorf("key %d (typed at %v) was drawn at the tunnel after %v and has no pixel change over its cell", i, k.At, k.Draw)
		}
	}
	if p.Diff.N < 10 || p.Early != 0 {
		t.Errorf("%d keys timed to their pixels and their draw of %d typed, %d early", p.Diff.N, p.Typed, p.Early)
	}
	t.Logf("%d keys: %d timed, %d with no pixel change, %d untimed, %d in the tail; key-to-pixel median %v, minus key-to-draw median %v (%v to %v)",
		p.Typed, p.Diff.N, p.Unanswered, p.Untimed, p.Tail, p.Pixel.P50, p.Diff.P50, p.Diff.Min, p.Diff.Max)
	if left := ours(t); len(left) > 0 {
		t.Errorf("left running: %v", left)
	}
}
