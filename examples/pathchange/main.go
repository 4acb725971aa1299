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
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shakenfist/quicbench/examples/internal/gorun"
	"github.com/shakenfist/quicbench/internal/cli"
	"github.com/shakenfist/quicbench/measure/pathchange"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/linkflag"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

func main() {
	gorun.Follow()
	pathchange.MaybeRunRole()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// linkFlags registers the link flags the command has (package
// linkflag's): -profile and -backend.
func linkFlags(fs *flag.FlagSet) *linkflag.Flags {
	return linkflag.Register(fs, linkflag.Config{Flags: linkflag.Profile | linkflag.Backend | linkflag.Emulator, Profiles: "80:10"})
}

func parseFlags(args []string, stderr io.Writer) (pathchange.Config, error) {
	fs := flag.NewFlagSet("pathchange", flag.ContinueOnError)
	fs.SetOutput(stderr)
	link := linkFlags(fs)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: pathchange [flags]\n\nMoves a live session's client to a new address: QUIC migrates, TCP cannot.\n\nflags:\n")
		fs.PrintDefaults()
		fmt.Fprint(stderr, shapedlink.ProfileUsage())
	}
	losses := fs.String("losses", "0 1", "per-direction loss levels in percent, space-separated; each replaces any loss -profile gives")
	arms := fs.String("arms", "tcp quic", "arms, space-separated: tcp, quic, quic-per-channel")
	repeats := fs.Int("repeats", 5, "repeats per loss level and arm")
	duration := fs.Duration("duration", 20*time.Second, "workload length")
	warmup := fs.Duration("warmup", 2*time.Second, "leading part left out of the goodput figure")
	at := fs.Duration("change-at", 10*time.Second, "when the client moves, counted from its session coming up")
	order := fs.String("order", pathchange.OrderMakeFirst, "make-first (migrate, then remove the old address) or break-first (remove, then migrate)")
	timeout := fs.Duration("timeout", 5*time.Second, "interactive round-trip timeout and bound on each closing step")
	probe := fs.Duration("probe-timeout", 5*time.Second, "bound on QUIC path validation")
	linger := fs.Duration("linger", 5*time.Second, "how long a server is left to notice by itself after the client ends")
	workdir := fs.String("workdir", "results/pathchange", "results directory")
	qlog := fs.Bool("qlog", false, "write a qlog file per QUIC connection into each run directory")
	redo := fs.Bool("redo", false, "rerun runs that already have a record")
	reanalyse := fs.Bool("reanalyse", false, "measure nothing: recompute every record from the role processes' files already in the work directory")
	if err := cli.Parse(fs, args); err != nil {
		return pathchange.Config{}, err
	}
	p, perr := link.Profile()
	lo, oerr := link.Options()
	errs := []error{perr, oerr}
	c := pathchange.Config{Profile: p, Repeats: *repeats, Linger: *linger, Workdir: *workdir, Qlog: *qlog, Redo: *redo,
		Reanalyse: *reanalyse, Link: lo}
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
	if *order != pathchange.OrderMakeFirst && *order != pathchange.OrderBreakFirst {
		errs = append(errs, fmt.Errorf("-order %q: want %s or %s", *order, pathchange.OrderMakeFirst, pathchange.OrderBreakFirst))
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
	c.Change = pathchange.Change{At: *at, Order: *order, ProbeTimeout: *probe}
	if c.Workdir == "" {
		errs = append(errs, errors.New("-workdir is empty"))
	}
	return c, errors.Join(errs...)
}

func run(args []string, stdout, stderr io.Writer) int {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return cli.Exit(stderr, "pathchange", err)
	}
	if !c.Reanalyse {
		// Building links needs privilege: as an ordinary user this
		// re-executes the command inside a user and network namespace
		// of its own and exits with its status.
		if err := pathchange.Prepare(); err != nil {
			fmt.Fprintln(stderr, "pathchange:", err)
			return 1
		}
	}
	c.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	c.Progress = stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := pathchange.Run(ctx, c)
	fmt.Fprint(stdout, res.Summary)
	if err != nil {
		fmt.Fprintln(stderr, "pathchange:", err)
		if ctx.Err() != nil && res.Summary == "" {
			return 130 // interrupted; the run in progress is redone on resume
		}
		return 1
	}
	if line := pathchange.Failures(res.Records); line != "" {
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
