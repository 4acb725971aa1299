package summary

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/spicelive/internal/livetest"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/spicelive"
	"github.com/shakenfist/quicbench/measure/spicelive/keydraw"
)

// The live runs re-execute the test binary as their roles.
func TestMain(m *testing.M) {
	spicelive.MaybeRunRole()
	os.Exit(m.Run())
}

// smokeConfig is a short live matrix: one fast link, one repeat.
func smokeConfig(t *testing.T, profiles string, arms ...measure.Arm) spicelive.Config {
	c := spicelive.Config{Arms: arms, Readings: []string{spicelive.ReadingLive}, Repeats: 1, Duration: 5 * time.Second, Warmup: time.Second,
		CC: "reno", KeyInterval: 250 * time.Millisecond, BusyInterval: 50 * time.Millisecond, Settle: 500 * time.Millisecond,
		Reference: "1:100", Workdir: t.TempDir(), SessionTimeout: 30 * time.Second}
	c.Profiles = strings.Fields(profiles)
	return c
}

// TestLiveControl is the control: on a lossless link, the median
// key-to-draw moves by the change of the round trip, no key is answered
// faster than the round trip, and the busy area's draws, which would have
// been faster, are not counted.
func TestLiveControl(t *testing.T) {
	if testing.Short() {
		t.Skip("two live sessions; -short skips them")
	}
	livetest.Need(t)
	c := smokeConfig(t, spicelive.DefaultControlProfiles, measure.TCP)
	c.Control = true
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var progress bytes.Buffer
	if err := spicelive.Run(context.Background(), c, &progress, log); err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	var out bytes.Buffer
	err := Summarise(&out, c)
	t.Logf("test output:\n%s", out.String())
	if err != nil {
		t.Error(err)
	}
}

// TestLivePixel runs a short control with key-to-pixel on: every key
// answered at the tunnel must have its pixels change in spicy's window,
// no earlier than its draw passed the tunnel (less PixelTolerance) and no
// sooner after it was typed than the link's round trip.
func TestLivePixel(t *testing.T) {
	if testing.Short() {
		t.Skip("two live sessions; -short skips them")
	}
	livetest.Need(t)
	c := smokeConfig(t, spicelive.DefaultControlProfiles, measure.TCP)
	c.Control, c.Pixel = true, true
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	var progress bytes.Buffer
	if err := spicelive.Run(context.Background(), c, &progress, log); err != nil {
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
		cell, prof, _ := cellOf(c, profile)
		rtt := prof.RoundTrip()
		dir := results.RunDir(c.ReadingDir(spicelive.ReadingLive), cell, string(measure.TCP), 1)
		var rec spicelive.LiveRecord
		if err := results.ReadJSON(filepath.Join(dir, spicelive.LiveFile), &rec); err != nil {
			t.Fatal(err)
		}
		p := rec.Pixel
		if p == nil {
			t.Fatalf("%s: no key-to-pixel in %s", profile, spicelive.LiveFile)
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
			if k.Pixel < k.Tunnel+k.Draw-keydraw.PixelTolerance {
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
