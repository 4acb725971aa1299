package spicelive

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/bench"
	"github.com/shakenfist/quicbench/measure/loop"
	"github.com/shakenfist/quicbench/measure/plan"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/rig"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/stats"
	"github.com/shakenfist/quicbench/transport/quicreno"
)

// Run makes every run of c's plan not yet measured, writing a line per
// run to progress, and records each in c.Workdir: run.json in
// ReadingDir(reading)/<cell>/<arm>/r<N>, with a live run's LiveRecord,
// traces, logs and screenshot beside it. A measured run is skipped; a
// failed or corrupt one is set aside (r<N>.failed-<k>, r<N>.corrupt-<k>)
// and redone; an interrupted one is not recorded and is redone by the
// next Run.
//
// It returns nil when every run was measured; an error wrapping
// ErrRunsFailed when some failed (each run.json says why); ErrWorkdir
// when the work directory is locked or was made with other settings; and
// results.ErrInterrupted when ctx ended. summary.Summarise reads what it recorded.
// The process must call MaybeRunRole first thing, as Run starts the
// roles as this binary again, and Prepare before Run.
func Run(ctx context.Context, c Config, progress io.Writer, log *slog.Logger) error {
	if err := c.Validate(); err != nil {
		return err
	}
	for _, a := range c.Arms {
		if err := transportArm(a).Available(ctx); err != nil {
			return fmt.Errorf("-arms %s: %w", a, err)
		}
	}
	if c.needsController() {
		ctl, err := quicreno.Load(quicreno.Defaults())
		if err != nil {
			return err
		}
		defer ctl.Close()
	}
	return runPlan(ctx, c, progress, log, runJob)
}

// jobRunner makes and records one run (runJob).
type jobRunner func(ctx context.Context, c Config, j Job, cell results.Cell, prof shapedlink.Profile, dir string,
	replay *spicelike.Replay, replayErr error, log *slog.Logger) (results.Run, error)

// runPlan is Run with each run made by runJob.
func runPlan(ctx context.Context, c Config, progress io.Writer, log *slog.Logger, runJob jobRunner) error {
	release, err := claimWorkdir(&c)
	if err != nil {
		return err
	}
	defer release()
	plan := c.Plan()
	if c.Order == OrderRandom {
		fmt.Fprintf(progress, "arms in a random order in each repeat, seed %d (-order-seed %d repeats it)\n", c.OrderSeed, c.OrderSeed)
	}
	var replay *spicelike.Replay
	var replayErr error
	failed := 0
	for i, j := range plan {
		cell, prof, err := c.cell(j.Profile)
		if err != nil {
			return err
		}
		dir := results.RunDir(c.ReadingDir(j.Reading), cell, string(j.Arm), j.Repeat)
		switch _, st, cerr := results.Check(dir, cell, string(j.Arm), j.Repeat); st {
		case results.Measured:
			continue
		case results.FailedRun, results.Corrupt:
			why := map[results.State]string{results.FailedRun: "failed", results.Corrupt: "corrupt"}[st]
			if st == results.Corrupt {
				log.Warn("a run record does not validate; it is set aside and the run redone", "dir", dir, "err", cerr)
			}
			if _, err := results.SetAside(dir, why); err != nil {
				return err
			}
		}
		if j.Reading == ReadingReplay && replay == nil && replayErr == nil && c.Recording != "" {
			fmt.Fprintf(progress, "replaying the shipped recording %s\n", c.Recording)
			replay, replayErr = spicelike.Recording(c.Recording)
		}
		if j.Reading == ReadingReplay && replay == nil && replayErr == nil {
			fmt.Fprintf(progress, "recording the session to replay over %s (tcp arm)\n", c.Reference)
			replay, replayErr = ensureReference(ctx, c, log)
			if ctx.Err() != nil {
				return fmt.Errorf("%w: while recording the reference session", results.ErrInterrupted)
			}
			if replayErr != nil {
				fmt.Fprintf(progress, "no reference recording, so no replay: %v\n", replayErr)
			}
		}
		fmt.Fprintf(progress, "[%d/%d] %s %s %s r%d ... ", i+1, len(plan), j.Reading, j.Profile, j.Arm, j.Repeat)
		run, err := runJob(ctx, c, j, cell, prof, dir, replay, replayErr, log)
		switch {
		case errors.Is(err, results.ErrInterrupted):
			fmt.Fprintln(progress, "interrupted; it is redone on the next run")
			return err
		case err != nil && run.Failed == "":
			fmt.Fprintln(progress, "could not be recorded")
			return fmt.Errorf("%s %s %s r%d: %w", j.Reading, j.Profile, j.Arm, j.Repeat, err)
		case run.Failed != "":
			failed++
			fmt.Fprintf(progress, "FAILED: %s\n", run.Failed)
		default:
			fmt.Fprintln(progress, runLine(run, c.Warmup))
		}
	}
	if failed > 0 {
		return fmt.Errorf("%w: %d of %d runs failed (each run.json says why); the same command redoes them", ErrRunsFailed, failed, len(plan))
	}
	return nil
}

// runLine is a run's figures for the progress output.
func runLine(run results.Run, warmup time.Duration) string {
	s, err := stats.SummariseRepeat(run.StatsRepeat(), warmup)
	if err != nil {
		return fmt.Sprintf("measured, but: %v", err)
	}
	return fmt.Sprintf("p50 %.1f ms, p95 %.1f ms, %d samples, %d unanswered or timed out", ms64(s.P50), ms64(s.P95), s.N, run.Timeouts)
}

func ms64(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// runJob makes one run of any reading.
func runJob(ctx context.Context, c Config, j Job, cell results.Cell, prof shapedlink.Profile, dir string,
	replay *spicelike.Replay, replayErr error, log *slog.Logger) (results.Run, error) {
	w := spicelike.Defaults()
	w.Duration, w.Warmup = c.Duration, c.Warmup
	switch j.Reading {
	case ReadingLive:
		return recordLive(ctx, c, j, cell, prof, dir, log)
	case ReadingReplay:
		if replayErr != nil {
			return results.RecordRun(ctx, dir, results.NewRun(cell, string(j.Arm), measure.Arm(j.Arm).QUIC(), j.Repeat, w.Duration, w.Warmup), log, func(*results.Run) error {
				return fmt.Errorf("no session to replay: %w", replayErr)
			}, nil)
		}
		w.Replay, w.Channels = replay, replay.ConfigChannels()
	}
	rc := bench.RunConfig{Run: plan.Run{Cell: cell, Profile: prof, Arm: measure.Arm(j.Arm), Repeat: j.Repeat, Workload: w, Workdir: c.ReadingDir(j.Reading),
		Link: c.linkOptions(log), Logger: log, Controller: c.controller()}}
	run, err := bench.RunOne(ctx, rc)
	if err != nil && run.Failed != "" {
		return run, nil // recorded as failed
	}
	return run, err
}

// recordLive makes and records one live run over a fresh link of profile
// prof (loop.One on rig.Local), with its live.json.
func recordLive(ctx context.Context, c Config, j Job, cell results.Cell, prof shapedlink.Profile, dir string, log *slog.Logger) (results.Run, error) {
	lj := &liveJob{c: c, j: j, cell: cell, prof: prof, dir: dir, log: log}
	return loop.One(ctx, rig.Local{Env: liveRoles, Link: c.linkOptions(log), Log: log}, lj, log)
}

// replayFile is the reference recording's replay, in the reference
// directory.
const replayFile = "replay.json"

// ensureReference returns the session the replay reading plays: made
// once per work directory, by a live run over the reference link (tcp
// arm, no loss), and kept as replay.json beside it.
func ensureReference(ctx context.Context, c Config, log *slog.Logger) (*spicelike.Replay, error) {
	dir := c.referenceDir()
	if r, err := results.ReadExtra[spicelike.Replay](dir, replayFile); err == nil {
		return &r, r.Validate()
	}
	cell, prof, err := c.cell(c.Reference)
	if err != nil {
		return nil, err
	}
	j := Job{Profile: c.Reference, Arm: measure.TCP, Reading: ReadingLive, Repeat: 1}
	run, err := recordLive(ctx, c, j, cell, prof, dir, log)
	switch {
	case err != nil:
		return nil, err
	case run.Failed != "":
		return nil, fmt.Errorf("the reference session failed: %s", run.Failed)
	}
	rec, err := results.ReadExtra[LiveRecord](dir, LiveFile)
	if err != nil {
		return nil, err
	}
	client, err := ReadTrace(filepath.Join(dir, ClientTrace))
	if err != nil {
		return nil, err
	}
	server, err := ReadTrace(filepath.Join(dir, ServerTrace))
	if err != nil {
		return nil, err
	}
	AnalyseRun(c, client, rec.Server, rec.Client).Tag(client)
	rp, err := spicelike.ReplayFromTraces(client, server, rec.Client.TypingStart, rec.Client.TypingEnd)
	if err != nil {
		return nil, err
	}
	rp.Source = fmt.Sprintf("the live session recorded over %s (tcp arm) in %s", c.Reference, dir)
	return rp, results.WriteJSON(filepath.Join(dir, replayFile), rp)
}

// adoptOrder fills c's order and seed, where it leaves them to be chosen,
// from had's; a random order without a seed gets a new one.
func adoptOrder(c *Config, had Config) {
	if c.Order == "" {
		c.Order = had.Order
		if c.OrderSeed == 0 {
			c.OrderSeed = had.OrderSeed
		}
	}
	if c.Order == OrderRandom && c.OrderSeed == 0 {
		if c.OrderSeed = had.OrderSeed; c.OrderSeed == 0 {
			c.OrderSeed = rand.Uint64() | 1
		}
	}
}

// recordSession records the session the replay reading plays, once per work
// directory, as Run's replay reading does with no Recording: a live
// session over c.Reference on the tcp arm, with c's display workload,
// kept as replay.json in the work directory's reference directory. It
// runs no other reading.
func recordSession(ctx context.Context, c Config, log *slog.Logger) (*spicelike.Replay, error) {
	c.Recording = ""
	if err := c.validate(true); err != nil {
		return nil, err
	}
	release, err := claimWorkdir(&c)
	if err != nil {
		return nil, err
	}
	defer release()
	rp, err := ensureReference(ctx, c, log)
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%w: while recording the session", results.ErrInterrupted)
	}
	return rp, err
}

// claimWorkdir makes and locks the work directory, and refuses one made
// with other settings. An order left empty is the directory's, or for a
// new one random with a seed chosen now; both are written to c.
func claimWorkdir(c *Config) (func(), error) {
	if err := os.MkdirAll(c.Workdir, 0o755); err != nil {
		return nil, err
	}
	release, err := results.Lock(c.Workdir)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrWorkdir, err)
	}
	path := filepath.Join(c.Workdir, SettingsFile)
	var had Config
	switch rerr := results.ReadJSON(path, &had); {
	case rerr == nil:
		adoptOrder(c, had)
		if had.Order == "" && c.Order == orderFixed {
			c.Order = "" // the fixed order of a directory made before the choice
		}
		if diffs := diffSettings(had, *c); len(diffs) > 0 {
			err = fmt.Errorf("%w: %s was made with other settings (%s): give the same settings to resume it, or another -workdir",
				ErrWorkdir, c.Workdir, diffs)
		}
	case errors.Is(rerr, os.ErrNotExist):
		adoptOrder(c, Config{Order: OrderRandom})
		err = results.WriteJSON(path, c)
	default:
		err = fmt.Errorf("%w: %v (remove %s if the directory holds no runs you need)", ErrWorkdir, rerr, path)
	}
	if err != nil {
		release()
		return nil, err
	}
	return release, nil
}
