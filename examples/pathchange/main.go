package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

func main() {
	maybeRunRole()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// config is one invocation: the runs to make and where.
type config struct {
	Profile  shapedlink.Profile
	Losses   []float64
	Arms     []transport.Arm
	Repeats  int
	Workload spicelike.Config
	Change   changeSpec
	Linger   time.Duration
	Workdir  string
	Link     shapedlink.Options
	Qlog     bool
	Redo     bool
	// Reanalyse recomputes records from files on disk instead of running.
	Reanalyse bool
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("pathchange", flag.ContinueOnError)
	fs.SetOutput(stderr)
	profile := fs.String("profile", "80:10", "link profile, "+shapedlink.ProfileGrammar+" (loss comes from -losses); the options are listed below")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: pathchange [flags]\n\nMoves a live session's client to a new address: QUIC migrates, TCP cannot.\n\nflags:\n")
		fs.PrintDefaults()
		fmt.Fprint(stderr, shapedlink.ProfileUsage())
	}
	losses := fs.String("losses", "0 1", "per-direction loss levels in percent, space-separated")
	arms := fs.String("arms", "tcp quic", "arms, space-separated: tcp, quic, quic-per-channel")
	repeats := fs.Int("repeats", 5, "repeats per loss level and arm")
	duration := fs.Duration("duration", 20*time.Second, "workload length")
	warmup := fs.Duration("warmup", 2*time.Second, "leading part left out of the goodput figure")
	at := fs.Duration("change-at", 10*time.Second, "when the client moves, counted from its session coming up")
	order := fs.String("order", orderMakeFirst, "make-first (migrate, then remove the old address) or break-first (remove, then migrate)")
	timeout := fs.Duration("timeout", 5*time.Second, "interactive round-trip timeout and bound on each closing step")
	probe := fs.Duration("probe-timeout", 5*time.Second, "bound on QUIC path validation")
	linger := fs.Duration("linger", 5*time.Second, "how long a server is left to notice by itself after the client ends")
	workdir := fs.String("workdir", "results/pathchange", "results directory")
	backend := fs.String("backend", "", "link backend: netem, emulator, or empty to choose (netem where the kernel has it)")
	qlog := fs.Bool("qlog", false, "write a qlog file per QUIC connection into each run directory")
	redo := fs.Bool("redo", false, "rerun runs that already have a record")
	reanalyse := fs.Bool("reanalyse", false, "measure nothing: recompute every record from the role processes' files already in the work directory")
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	var errs []error
	p, err := shapedlink.ParseProfile(*profile)
	if err != nil {
		errs = append(errs, err)
	}
	c := config{Profile: p, Repeats: *repeats, Linger: *linger, Workdir: *workdir, Qlog: *qlog, Redo: *redo, Reanalyse: *reanalyse,
		Link: shapedlink.Options{Backend: shapedlink.Backend(*backend)}}
	switch c.Link.Backend {
	case shapedlink.BackendAuto, shapedlink.BackendNetem, shapedlink.BackendEmulator:
	default:
		errs = append(errs, fmt.Errorf("-backend %q: want netem, emulator or empty", *backend))
	}
	for _, f := range strings.Fields(*losses) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || v < 0 || v >= 100 {
			errs = append(errs, fmt.Errorf("-losses: %q is not a loss percentage in [0, 100)", f))
			continue
		}
		c.Losses = append(c.Losses, v)
	}
	for _, f := range strings.Fields(*arms) {
		a, err := transport.ParseArm(f)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c.Arms = append(c.Arms, a)
	}
	if len(c.Losses) == 0 || len(c.Arms) == 0 {
		errs = append(errs, errors.New("give at least one loss level (-losses) and one arm (-arms)"))
	}
	if c.Repeats < 1 {
		errs = append(errs, fmt.Errorf("-repeats %d: need at least 1 (5 for a spread)", c.Repeats))
	}
	if *order != orderMakeFirst && *order != orderBreakFirst {
		errs = append(errs, fmt.Errorf("-order %q: want %s or %s", *order, orderMakeFirst, orderBreakFirst))
	}
	if *at <= 0 || *at >= *duration {
		errs = append(errs, fmt.Errorf("-change-at %v must fall inside the %v run", *at, *duration))
	}
	if *probe <= 0 || *linger < 0 {
		errs = append(errs, errors.New("-probe-timeout must be positive and -linger not negative"))
	}
	w := spicelike.Defaults()
	w.Duration, w.Warmup, w.Timeout = *duration, *warmup, *timeout
	if err := w.Validate(); err != nil {
		errs = append(errs, err)
	}
	c.Workload = w
	c.Change = changeSpec{At: *at, Order: *order, ProbeTimeout: *probe}
	if c.Workdir == "" {
		errs = append(errs, errors.New("-workdir is empty"))
	}
	return c, errors.Join(errs...)
}

func (c config) plan() []runConfig {
	var out []runConfig
	for _, loss := range c.Losses {
		cell := results.Cell{
			Profile: c.Profile.WithLoss(0).String(), RTTms: float64(c.Profile.RoundTrip()) / float64(time.Millisecond),
			RateMbit: c.Profile.RateMbit, LossPct: loss, CC: "reno",
		}
		for r := 1; r <= c.Repeats; r++ {
			for _, arm := range c.Arms {
				out = append(out, runConfig{Cell: cell, Profile: c.Profile.WithLoss(loss), Arm: arm, Repeat: r,
					Workload: c.Workload, Change: c.Change, Workdir: filepath.Join(c.Workdir, c.Change.Order),
					Link: c.Link, Qlog: c.Qlog, Linger: c.Linger})
			}
		}
	}
	return out
}

func run(args []string, stdout, stderr io.Writer) int {
	c, err := parseFlags(args, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "pathchange:", err)
		return 2
	}
	if !c.Reanalyse {
		// Building links needs privilege: as an ordinary user this
		// re-executes the command inside a user and network namespace
		// of its own and exits with its status.
		if err := prepare(); err != nil {
			fmt.Fprintln(stderr, "pathchange:", err)
			return 1
		}
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	plan := c.plan()
	var recs []Record
	for i, rc := range plan {
		rc.Logger = log
		path := filepath.Join(rc.dir(), recordFile)
		if c.Reanalyse {
			rec, err := reanalyse(rc)
			if err != nil {
				fmt.Fprintln(stderr, "pathchange:", err)
				return 1
			}
			recs = append(recs, rec)
			continue
		}
		if !c.Redo {
			var rec Record
			// A failed run is kept until it is redone, but never
			// counted as done.
			if err := results.ReadJSON(path, &rec); err == nil && rec.Failed == "" {
				recs = append(recs, rec)
				continue
			}
		}
		fmt.Fprintf(stderr, "[%d/%d] loss %g%% %s r%d (%s)\n", i+1, len(plan), rc.Cell.LossPct, rc.Arm, rc.Repeat, rc.Change.Order)
		rec, err := runOne(ctx, rc)
		if err != nil {
			fmt.Fprintln(stderr, "pathchange:", err)
			if ctx.Err() != nil {
				return 130 // interrupted; the run in progress is redone on resume
			}
			return 1
		}
		fmt.Fprintf(stderr, "    survived %v (%s); stall %v open %v\n", rec.Survived, rec.Why, rec.Stall.Gap.Round(time.Millisecond), rec.Stall.Open)
		recs = append(recs, rec)
	}
	rows := Summarise(recs)
	var b strings.Builder
	fmt.Fprintf(&b, "Path change at %v into a %v run, profile %s, %d repeats; figures are median [min–max] over repeats.\n\n",
		c.Change.At, c.Workload.Duration, c.Profile.WithLoss(0), c.Repeats)
	WriteTable(&b, rows)
	fmt.Fprint(stdout, b.String())
	dir := filepath.Join(c.Workdir, c.Change.Order)
	if err := os.WriteFile(filepath.Join(dir, "summary.md"), []byte(b.String()), 0o644); err != nil {
		fmt.Fprintln(stderr, "pathchange:", err)
		return 1
	}
	if err := results.WriteJSON(filepath.Join(dir, "summary.json"), rows); err != nil {
		fmt.Fprintln(stderr, "pathchange:", err)
		return 1
	}
	if line := failureLine(recs); line != "" {
		if c.Reanalyse {
			// Reanalysing measures nothing, so it does not fail; it
			// says what the records hold.
			fmt.Fprintf(stderr, "pathchange: the records hold %s\n", line)
			return 0
		}
		fmt.Fprintf(stderr, "pathchange: %s; the summary counts them as unmeasured, and the same command measures them again\n", line)
		return 1
	}
	return 0
}

// failureLine is "N of M measurements failed (which)" for the runs in recs
// that could not be measured, or "" when none failed.
func failureLine(recs []Record) string {
	var failed []string
	for _, r := range recs {
		if r.Failed != "" {
			failed = append(failed, fmt.Sprintf("loss %g%% %s r%d", r.Cell.LossPct, r.Arm, r.Repeat))
		}
	}
	if len(failed) == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d measurements failed (%s)", len(failed), len(recs), strings.Join(failed, ", "))
}

// reanalyse recomputes one run's record from what its processes wrote,
// keeping the link's events from the record already there.
func reanalyse(rc runConfig) (Record, error) {
	dir := rc.dir()
	var old Record
	if err := results.ReadJSON(filepath.Join(dir, recordFile), &old); err != nil {
		return Record{}, fmt.Errorf("no record to reanalyse: %w", err)
	}
	// Only the client spec's change is needed (the spec's type is the
	// Linux orchestrator's).
	var cspec struct {
		Change *changeSpec `json:"change"`
	}
	if err := results.ReadJSON(filepath.Join(dir, "client-spec.json"), &cspec); err != nil || cspec.Change == nil {
		return Record{}, fmt.Errorf("%s: no client spec with a change (%v)", dir, err)
	}
	var cres, sres roleResult
	_ = results.ReadJSON(filepath.Join(dir, "client.json"), &cres)
	_ = results.ReadJSON(filepath.Join(dir, "server.json"), &sres)
	var link []Event
	for _, e := range old.Events {
		if e.Side == "link" {
			link = append(link, e)
		}
	}
	rec := Analyse(rc.Cell, string(rc.Arm), rc.Repeat, *cspec.Change, cres, sres, link)
	rec.Failed = old.Failed
	return rec, results.WriteJSON(filepath.Join(dir, recordFile), rec)
}
