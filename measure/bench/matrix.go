package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/shakenfist/quicbench/measure/loop"
	"github.com/shakenfist/quicbench/measure/plan"
	"github.com/shakenfist/quicbench/measure/rig"
	"github.com/shakenfist/quicbench/measure/twohost"
	"github.com/shakenfist/quicbench/transport/quicreno"
)

// Options say how a matrix runs (Run): where its ends run, and where its
// progress and warnings go.
type Options struct {
	// Remote is the client of the two-host daemon a matrix with
	// plan.Matrix.Remote set runs against; its Addr must be that address.
	// It must be nil for a matrix over an emulated link.
	Remote *twohost.Client
	// Progress receives progress lines; a terminal gets one updating
	// line. Nil prints none.
	Progress io.Writer
	// Logger receives the runs' warnings; nil is slog.Default.
	Logger *slog.Logger
}

// validate says what is wrong with o for m.
func (o Options) validate(m *plan.Matrix) []error {
	switch {
	case m.Remote == "" && o.Remote != nil:
		return []error{fmt.Errorf("a two-host client (for %s) is given, but the matrix names no daemon: set its Remote", o.Remote.Addr)}
	case m.Remote != "" && o.Remote == nil:
		return []error{fmt.Errorf("the matrix runs against the daemon at %s, but no two-host client (with the secret) is given", m.Remote)}
	case m.Remote != "" && o.Remote.Addr != m.Remote:
		return []error{fmt.Errorf("the two-host client is for %s, but the matrix names the daemon at %s", o.Remote.Addr, m.Remote)}
	case o.Remote != nil:
		return o.Remote.Validate()
	}
	return nil
}

// Errors Run returns, beside plan.ErrWorkdir, to tell the caller what kind
// of trouble it met.
var (
	// ErrEnvironment: the host refused what the matrix needs (a
	// controller that could not be loaded) before anything ran.
	ErrEnvironment = errors.New("environment refused")
	// ErrRunsFailed: the matrix ran to its end, but some runs failed. They
	// are recorded (with their reasons) and are redone on the next run.
	ErrRunsFailed = errors.New("runs failed")
)

// runsFailedError says how many runs of a matrix failed.
type runsFailedError struct{ Failed, Total int }

func (e *runsFailedError) Error() string {
	return fmt.Sprintf("%d of %d runs failed (each run.json says why); they are redone when the same command runs again", e.Failed, e.Total)
}

func (e *runsFailedError) Unwrap() error { return ErrRunsFailed }

// Run runs every run of m's plan that has not been measured, each a
// RunConfig on package loop. A run is measured when its run.json parses,
// validates and records no failure: an interrupted matrix resumes where it
// stopped, a failed run's record is set aside (as r<N>.failed-<k>) and the
// run redone, and a record that does not validate is set aside (as
// r<N>.corrupt-<k>) and redone. A work directory made for a different
// matrix, or held by another command, is refused with an error wrapping
// plan.ErrWorkdir. When runs fail, Run still makes every other run and
// then returns an error wrapping ErrRunsFailed that counts them.
func Run(ctx context.Context, m *plan.Matrix, o Options) error {
	if err := errors.Join(append([]error{m.Validate()}, o.validate(m)...)...); err != nil {
		return err
	}
	for _, a := range m.Arms {
		if err := a.Available(ctx); err != nil {
			return fmt.Errorf("arm %s cannot run here: %w", a, err)
		}
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	claimed, err := m.Claim()
	if err != nil {
		return err
	}
	defer claimed.Release()

	runs := m.Plan()
	jobs := make([]loop.Job, len(runs))
	for i, r := range runs {
		r.Logger = log
		jobs[i] = RunConfig{r}
	}
	todo, retried := loop.Pending(jobs, log)
	ends := o.ends(m, log)
	if len(todo) > 0 {
		// Refused before anything runs, rather than as a failed run
		// each; and then the work directory is left as it was, so that
		// the corrected command is not refused for a matrix.json this one
		// wrote.
		if err := ends.Ready(ctx); err != nil {
			claimed.Undo()
			return err
		}
		defer ends.Close()
	}
	if p, ok := m.Quicreno(); ok && len(todo) > 0 {
		// Registered for the whole matrix, for every namespace; the
		// kernel drops it when this process exits, however it ends.
		ctl, err := quicreno.Load(p)
		if err != nil {
			claimed.Undo()
			return fmt.Errorf("%w: %v", ErrEnvironment, err)
		}
		defer ctl.Close()
	}
	prog := newProgress(o.Progress, len(runs), len(runs)-len(todo), m.Workload.Duration)
	defer prog.finish()
	if done := len(runs) - len(todo); done > 0 || retried > 0 {
		which := m.Workdir
		if !m.Shard.Whole() {
			which += " (shard " + m.Shard.String() + ")"
		}
		prog.line(fmt.Sprintf("resuming %s: %d runs already measured, %d to do (%d of them failed before and are retried)",
			which, done, len(todo), retried))
	}
	failed, err := loop.Run(ctx, ends, todo, prog, log)
	if err != nil {
		return err
	}
	if failed > 0 {
		return &runsFailedError{Failed: failed, Total: len(runs)}
	}
	return nil
}

// ends is where m's runs run: between two hosts with Remote set, else on
// a fresh link on this machine each.
func (o Options) ends(m *plan.Matrix, log *slog.Logger) loop.Ends {
	if o.Remote != nil {
		o.Remote.Logger, o.Remote.Env = log, benchRoles
		return o.Remote
	}
	return rig.Local{Env: benchRoles, Link: m.Link, Log: log}
}
