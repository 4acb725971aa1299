package spicelive

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/transport"
)

// TestLivePixel runs a short control with key-to-pixel on: every key
// answered at the tunnel must have its pixels change in spicy's window,
// no earlier than its draw passed the tunnel (less PixelTolerance) and no
// sooner after it was typed than the link's round trip.
func TestLivePixel(t *testing.T) {
	if testing.Short() {
		t.Skip("two live sessions; -short skips them")
	}
	needLive(t)
	c := smokeConfig(t, DefaultControlProfiles, transport.ArmTCP)
	c.Control, c.Pixel = true, true
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var progress bytes.Buffer
	if err := Run(context.Background(), c, &progress, log); err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	var out bytes.Buffer
	err := Summarise(&out, c)
	t.Logf("test output:\n%s", out.String())
	if err != nil {
		t.Error(err)
	}
	if !strings.Contains(out.String(), "key-to-pixel") {
		t.Error("the control's summary has no key-to-pixel table")
	}
	for _, profile := range c.Profiles {
		cell, prof, _ := c.cell(profile)
		rtt := prof.RoundTrip()
		dir := results.RunDir(c.ReadingDir(ReadingLive), cell, string(transport.ArmTCP), 1)
		var rec LiveRecord
		if err := results.ReadJSON(filepath.Join(dir, LiveFile), &rec); err != nil {
			t.Fatal(err)
		}
		p := rec.Pixel
		if p == nil {
			t.Fatalf("%s: no key-to-pixel in %s", profile, LiveFile)
		}
		timed, drawn, missed := 0, 0, 0
		for i, k := range p.Keys {
			if k.Draw < 0 {
				continue
			}
			drawn++
			if k.Pixel < 0 {
				// On a busy machine spicy may paint a key after the next
				// one is typed; a few such keys are allowed, not many.
				missed++
				t.Logf("%s: key %d (typed at %v) was drawn at the tunnel after %v and has no pixel change before the next key", profile, i, k.At, k.Draw)
				continue
			}
			timed++
			if k.Pixel < k.Tunnel+k.Draw-PixelTolerance {
				t.Errorf("%s: key %d changed the pixels %v after it was typed, before its draw passed the tunnel (%v + %v)", profile, i, k.Pixel, k.Tunnel, k.Draw)
			}
			if k.Pixel < rtt {
				t.Errorf("%s: key %d changed the pixels %v after it was typed, faster than the %v round trip", profile, i, k.Pixel, rtt)
			}
		}
		if missed > drawn/4 {
			t.Errorf("%s: %d of %d keys drawn at the tunnel had no pixel change before the next key", profile, missed, drawn)
		}
		if timed < 8 || p.Early != 0 {
			t.Errorf("%s: %d keys timed to their pixels of %d typed, %d early", profile, timed, p.Typed, p.Early)
		}
		t.Logf("%s: key-to-pixel minus key-to-draw: median %v (%v to %v); input %v, output %v; %d of %d keys timed",
			profile, p.Diff.P50, p.Diff.Min, p.Diff.Max, p.Input.P50, p.Output.P50, timed, p.Typed)
	}
	// Other live sessions may be running here: this one's programs are
	// those whose environment names its work directory.
	if left := startedIn(c.Workdir); len(left) > 0 {
		t.Errorf("left running: %v", left)
	}
}

// startedIn lists the processes whose environment names a file under
// workdir, as every program of a run there has (its role's spec).
func startedIn(workdir string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		env, _ := os.ReadFile(filepath.Join(p, "environ"))
		if bytes.Contains(env, []byte("="+workdir+string(filepath.Separator))) {
			cmd, _ := os.ReadFile(filepath.Join(p, "cmdline"))
			out = append(out, filepath.Base(p)+" "+string(bytes.ReplaceAll(cmd, []byte{0}, []byte{' '})))
		}
	}
	return out
}

// The watch connects to the X server of its own network namespace, by
// the abstract socket, and says what it could not reach.
func TestDialXSaysWhatIsWrong(t *testing.T) {
	for _, tc := range []struct{ display, want string }{
		{"localhost:0", "want :N"},
		{":x", "want :N"},
		{":65000.0", "through its abstract socket"},
	} {
		if _, err := dialX(tc.display); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("dialX(%q): %v, want an error saying %q", tc.display, err, tc.want)
		}
	}
}

// TestLivePixelWithDisplay runs a short live session with key-to-pixel
// and the images workload over a 2 Mbit/s link, on which keys are drawn
// late and overlap: keys must be attributed by glyph, some timed to both
// their pixels and their draw, none early, and every key drawn at the
// tunnel must have its pixels change.
func TestLivePixelWithDisplay(t *testing.T) {
	if testing.Short() {
		t.Skip("a live session; -short skips it")
	}
	needLive(t)
	if miss := DisplayMissing(); miss != "" {
		t.Skip("no display workload here: " + miss)
	}
	if left := ours(t); len(left) > 0 {
		t.Skipf("a live session's programs are already running here: %v", left)
	}
	c := smokeConfig(t, "20:2", transport.ArmTCP)
	c.Duration, c.Warmup, c.Pixel = 20*time.Second, 3*time.Second, true
	if err := c.SetDisplay(DisplayImages); err != nil {
		t.Fatal(err)
	}
	c.KeyTimeout = 8 * time.Second
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var progress bytes.Buffer
	if err := Run(context.Background(), c, &progress, log); err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	cell, _, _ := c.cell("20:2")
	dir := results.RunDir(c.ReadingDir(ReadingLive), cell, string(transport.ArmTCP), 1)
	var rec LiveRecord
	if err := results.ReadJSON(filepath.Join(dir, LiveFile), &rec); err != nil {
		t.Fatal(err)
	}
	p := rec.Pixel
	if p == nil || p.Method != MethodGlyph {
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
