package spicelive

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/spicelive/xsession"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
)

// With Recording set, the replay reading plays that shipped recording,
// records no reference session, and the work directory is not resumed
// with another source.
func TestReplayPlaysTheShippedRecording(t *testing.T) {
	c := Config{Profiles: []string{"80:10"}, Arms: []measure.Arm{measure.TCP}, Readings: []string{ReadingReplay}, Repeats: 1,
		Duration: 5 * time.Second, Warmup: time.Second, CC: "reno", KeyInterval: 250 * time.Millisecond,
		BusyInterval: 50 * time.Millisecond, Reference: "1:100", Recording: "video", Workdir: t.TempDir(), SessionTimeout: time.Minute}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	var played *spicelike.Replay
	fake := func(ctx context.Context, c Config, j Job, cell results.Cell, _ shapedlink.Profile, dir string,
		replay *spicelike.Replay, replayErr error, log *slog.Logger) (results.Run, error) {
		if replayErr != nil {
			return results.Run{}, replayErr
		}
		played = replay
		w := spicelike.Config{Duration: c.Duration, Warmup: c.Warmup}
		return results.RecordRun(ctx, dir, results.NewRun(cell, string(j.Arm), measure.Arm(j.Arm).QUIC(), j.Repeat, w.Duration, w.Warmup), log, func(*results.Run) error { return errors.New("not run") }, nil)
	}
	var progress bytes.Buffer
	if err := runPlan(context.Background(), c, &progress, log, fake); !errors.Is(err, ErrRunsFailed) {
		t.Fatalf("runPlan: %v\n%s", err, progress.String())
	}
	want, _ := spicelike.Recording("video")
	if played == nil || played.Source != want.Source || played.Keys != want.Keys {
		t.Errorf("the replay reading played %v, want the shipped video recording", sourceOf(played))
	}
	if _, err := os.Stat(filepath.Join(c.Workdir, "reference")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a reference session was recorded: %v", err)
	}
	c.Recording = ""
	if err := runPlan(context.Background(), c, &progress, log, fake); !errors.Is(err, ErrWorkdir) || !strings.Contains(err.Error(), "recording") {
		t.Errorf("resuming with the reference as source: %v, want ErrWorkdir naming recording", err)
	}
	c.Recording = "pictures"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "images, video, reference") {
		t.Errorf("an unknown recording: %v", err)
	}
}

// Record makes a live session whatever the readings, so it checks the
// typed keys' timing even where Validate, with no reading that types
// keys, does not; it refuses before running anything (the reference
// session left in the work directory would otherwise be returned).
func TestRecordChecksTheKeys(t *testing.T) {
	c := displayConfig("images")
	c.Readings, c.Recording, c.Workdir = []string{ReadingSynthetic}, xsession.DisplayImages, t.TempDir()
	c.Duration = 10 * time.Minute
	if err := c.Validate(); err != nil {
		t.Fatalf("no keys typed: %v", err)
	}
	if err := os.MkdirAll(c.referenceDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(c.referenceDir(), replayFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	if _, err := recordSession(context.Background(), c, log); err == nil || !strings.Contains(err.Error(), "types 1200 keys") {
		t.Errorf("Record of a 10-minute session typing 1200 keys: %v, want it refused", err)
	}
}

func sourceOf(r *spicelike.Replay) string {
	if r == nil {
		return "nothing"
	}
	return r.Source
}
