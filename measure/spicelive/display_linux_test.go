package spicelive

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/spicelive/internal/livetest"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/spicelive/keydraw"
	"github.com/shakenfist/quicbench/measure/spicelive/picture"
	"github.com/shakenfist/quicbench/measure/spicelive/xsession"
)

// TestLiveDisplayWorkloads runs a short live session with each display
// workload over a 2 Mbit/s link, and checks that the workload's window
// sat beside the typing xterm, that the display channel carried most of
// the link's rate in the measured part, that the picture was measured at
// both ends, that keys were read by glyph, and that nothing the run
// started is left running.
func TestLiveDisplayWorkloads(t *testing.T) {
	if testing.Short() {
		t.Skip("two live sessions; -short skips them")
	}
	livetest.Need(t)
	if miss := xsession.DisplayMissing(); miss != "" {
		t.Skip("no display workload here: " + miss)
	}
	if left := ours(t); len(left) > 0 {
		t.Skipf("a live session's programs are already running here: %v", left)
	}
	for _, w := range []string{xsession.DisplayVideo, xsession.DisplayImages} {
		t.Run(w, func(t *testing.T) {
			c := smokeConfig(t, "20:2", measure.TCP)
			c.Duration, c.Warmup = 20*time.Second, 3*time.Second
			if err := c.setDisplay(w); err != nil {
				t.Fatal(err)
			}
			c.KeyTimeout = 8 * time.Second
			log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
			var progress bytes.Buffer
			if err := Run(context.Background(), c, &progress, log); err != nil {
				t.Fatalf("%v\n%s", err, progress.String())
			}
			t.Logf("test output:\n%s", progress.String())
			cell, _, _ := c.cell("20:2")
			dir := results.RunDir(c.ReadingDir(ReadingLive), cell, string(measure.TCP), 1)
			run, st, err := results.Check(dir, cell, string(measure.TCP), 1)
			if st != results.Measured {
				t.Fatalf("%v %v %s", st, err, run.Failed)
			}
			var rec LiveRecord
			if err := results.ReadJSON(filepath.Join(dir, LiveFile), &rec); err != nil {
				t.Fatal(err)
			}
			if rec.Server.Workload == nil || rec.Server.Workload.Intersects(rec.Server.Typing) || rec.Server.Workload.Intersects(rec.Server.Busy) {
				t.Errorf("the workload's window %+v, the xterms %+v and %+v", rec.Server.Workload, rec.Server.Typing, rec.Server.Busy)
			}
			d := rec.Display
			if d == nil || d.Workload != w || d.Share < SaturatedShare || !d.Saturated {
				t.Errorf("the display carried %+v, want at least %.0f%% of 2 Mbit/s", d, SaturatedShare*100)
			} else {
				t.Logf("%s: %.2f Mbit/s on the display, %.0f%% of the link, %.0f%% of it video stream frames", w, d.Mbit, d.Share*100,
					100*float64(d.StreamBytes)/float64(max(1, d.Bytes)))
			}
			if w == xsession.DisplayImages && d != nil && d.StreamBytes > 0 {
				t.Errorf("noise images were sent as %d bytes of video stream", d.StreamBytes)
			}
			checkPicture(t, w, rec.Picture)
			a := rec.Analysis
			if a.Method != keydraw.MethodGlyph || a.Keys == 0 || a.TypingDraws == 0 {
				t.Errorf("analysis %q: %d keys, %d typing draws", a.Method, a.Keys, a.TypingDraws)
			}
			for _, s := range a.Samples {
				if s.RTT < 19*time.Millisecond {
					t.Errorf("a key drawn after %v, faster than the 20 ms round trip", s.RTT)
				}
			}
			t.Logf("%d keys: %d timed, %d unanswered within %v, %d untimed, %d in the tail", a.Keys, len(a.Samples), a.Unanswered, c.KeyTimeout, a.Untimed, a.Tail)
		})
	}
	if left := ours(t); len(left) > 0 {
		t.Errorf("left running: %v", left)
	}
	if out, _ := exec.Command("ps", "-eo", "args").Output(); strings.Contains(string(out), "ximagesink sync=true force-aspect-ratio=false") {
		t.Errorf("a display workload is left running")
	}
}

// checkPicture checks a live run's picture figures are there and sane:
// frames reached the client, hardly more of them than were drawn, and
// the workload's bytes, as a stream or as images, most of the display
// channel's. The client may count a few more, should spicy show a frame
// in two paints that a read-back falls between.
func checkPicture(t *testing.T, workload string, p *picture.PictureRecord) {
	t.Helper()
	if p == nil {
		t.Error("no picture figures in the run's record")
		return
	}
	t.Logf("%s picture: %.1f frames/s at the client of %.1f drawn (%d of %d, workload %.0f/s), stream share %.0f%%, image share %.0f%%, %.0f bytes a frame",
		workload, p.ClientFPS, p.DrawnFPS, p.ClientFrames, p.DrawnFrames, p.NominalFPS, 100*p.StreamShare, 100*p.ImageShare, p.BytesPerFrame)
	if !(p.ClientFPS > 0) || !(p.DrawnFPS > 0) || p.ClientFPS > 1.25*p.DrawnFPS || p.DrawnFPS > 1.1*p.NominalFPS {
		t.Errorf("%.2f frames/s at the client, %.2f drawn, the workload's %.0f: want some at the client, at most 125%% of those drawn, "+
			"and no more drawn than 110%% of the workload's", p.ClientFPS, p.DrawnFPS, p.NominalFPS)
	}
	if p.StreamShare+p.ImageShare < 0.5 || p.BytesPerFrame <= 0 {
		t.Errorf("stream share %.2f and image share %.2f, %.0f bytes a frame: want the workload's frames most of the display's bytes",
			p.StreamShare, p.ImageShare, p.BytesPerFrame)
	}
}
