package results

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"
)

// ShaperLateLimit is the emulator lateness (99th percentile, either
// direction) above which a run is flagged: about one 1500-byte frame's
// serialisation at 10 Mbit/s, small against the headline profiles' delays
// but worth knowing.
const ShaperLateLimit = time.Millisecond

// ErrInterrupted marks a run stopped by its context: it is not recorded, so
// a rerun does it again.
var ErrInterrupted = errors.New("run interrupted")

// NewRun is the record of a run about to start: arm's run in cell, quic
// when the arm is a QUIC one, measured for duration after warmup.
func NewRun(cell Cell, arm string, quic bool, repeat int, duration, warmup time.Duration) Run {
	return Run{
		Schema:   SchemaVersion,
		Cell:     cell,
		Arm:      arm,
		QUIC:     quic,
		Repeat:   repeat,
		Started:  time.Now(),
		Duration: duration,
		Warmup:   warmup,
	}
}

// RecordRun makes one run and records it as dir/run.json: dir is emptied
// of what an earlier attempt left, measure fills in run, and the run is
// written atomically, with Failed set when measure failed. extra, when not
// nil, writes the command's own records of the run first; it sees the
// finished run. A run stopped by ctx is not recorded at all, so a rerun
// does it again: RecordRun then returns ErrInterrupted. Otherwise the
// error is only about recording; how the measurement went is in Failed.
func RecordRun(ctx context.Context, dir string, run Run, log *slog.Logger,
	measure func(run *Run) error, extra func(run Run) error) (Run, error) {
	if log == nil {
		log = slog.Default()
	}
	if err := resetDir(dir); err != nil {
		return run, err
	}
	err := measure(&run)
	run.Finished = time.Now()
	if ctx.Err() != nil {
		return run, fmt.Errorf("%w: %v", ErrInterrupted, context.Cause(ctx))
	}
	if err != nil {
		run.Failed = err.Error()
		log.Warn("run failed; recorded as unmeasured", "dir", dir, "err", err)
	}
	if extra != nil {
		if err := extra(run); err != nil {
			return run, err
		}
	}
	return run, WriteJSON(filepath.Join(dir, RunFile), run)
}

// resetDir makes dir an empty directory: anything in it is the debris of
// an interrupted attempt.
func resetDir(dir string) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.MkdirAll(dir, 0o755)
}
