package loop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/shakenfist/quicbench/measure/results"
)

// Pending is the jobs of plan not yet measured, in order: a job is
// measured when its run.json parses, validates and records no failure.
// retried counts the pending jobs whose last attempt failed.
func Pending(plan []Job, log *slog.Logger) (todo []Job, retried int) {
	if log == nil {
		log = slog.Default()
	}
	for _, j := range plan {
		dir, _, r := j.Start()
		_, st, err := results.Check(dir, r.Cell, r.Arm, r.Repeat)
		switch st {
		case results.Measured:
			continue
		case results.FailedRun:
			retried++
		case results.Corrupt:
			log.Warn("a run record does not validate; it will be set aside and the run redone", "dir", dir, "err", err)
		}
		todo = append(todo, j)
	}
	return todo, retried
}

// Progress hears of each run as it starts and ends.
type Progress interface {
	Start(run results.Run)
	Done(run results.Run, err error)
}

// Run makes every job in todo on ends (Ready already called), in order,
// each with One: what a failed or corrupt attempt left is first set aside
// (results.SetAside). It returns how many runs failed, and stops at an
// interruption (an error wrapping results.ErrInterrupted) or at a run it
// could not record.
func Run(ctx context.Context, ends Ends, todo []Job, prog Progress, log *slog.Logger) (failed int, err error) {
	for _, j := range todo {
		dir, _, start := j.Start()
		if _, st, _ := results.Check(dir, start.Cell, start.Arm, start.Repeat); st == results.FailedRun || st == results.Corrupt {
			why := "failed"
			if st == results.Corrupt {
				why = "corrupt"
			}
			if _, err := results.SetAside(dir, why); err != nil {
				return failed, err
			}
		}
		prog.Start(start)
		run, err := One(ctx, ends, j, log)
		switch {
		case errors.Is(err, results.ErrInterrupted):
			prog.Done(run, err)
			return failed, err
		case err != nil:
			return failed, fmt.Errorf("%s %s r%d: %w", start.Cell.Dir(), start.Arm, start.Repeat, err)
		case run.Failed != "":
			failed++
		}
		prog.Done(run, nil)
	}
	return failed, nil
}
