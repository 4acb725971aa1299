package benchcmd

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/shakenfist/quicbench/internal/cli"
	"github.com/shakenfist/quicbench/measure/bench"
	"github.com/shakenfist/quicbench/measure/plan"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/twohost"
	"github.com/shakenfist/quicbench/shapedlink"
)

// Main is the body of every matrix command: run the role if this process is
// one, parse the flags, get the privilege to build links, run the matrix and
// print the summary; or, with -serve, run the two-host daemon instead
// (docs/two-hosts.md). It returns the process exit code.
func Main(name, about string, d, quick Defaults, adjust func(*plan.Matrix) error) int {
	bench.MaybeRunRole()
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s [flags]\n\n%s\n\nflags:\n", name, about)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), shapedlink.ProfileUsage())
	}
	f := newFlags(fs, d, quick)
	if err := cli.Parse(fs, os.Args[1:]); err != nil {
		return cli.Exit(os.Stderr, name, err)
	}
	if f.twoHost.serve != "" {
		return serveMain(name, f)
	}
	// The flags are parsed before Reexec (parsing writes nothing unless it
	// fails, and then the command ends here) because -serve and -remote
	// build no link: there, re-executing into a fresh network namespace
	// would cut this process off from the other host.
	if f.twoHost.remote == "" {
		if err := shapedlink.Reexec(); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			return exitFailed
		}
	}
	m, err := f.matrix()
	if err == nil && adjust != nil {
		err = adjust(m)
		if err == nil {
			err = m.Validate()
		}
	}
	if err != nil {
		return cli.Exit(os.Stderr, name, err)
	}
	opts := bench.Options{Remote: f.remote, Progress: os.Stderr,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	runs := m.Plan()
	extra := ""
	for _, a := range m.AllAxes() {
		switch a.Name {
		case plan.AxisProfile, plan.AxisLoss, plan.AxisCC, plan.AxisRepeat, plan.AxisArm:
			// Named in the line below.
		default:
			extra += fmt.Sprintf(" x %d %s", len(a.Values), a.Label)
		}
	}
	cells := fmt.Sprintf("%d profiles x %d losses", len(m.Profiles), len(m.Losses))
	if m.Remote != "" {
		cells = "the path to " + m.Remote
	}
	fmt.Fprintf(os.Stderr, "%s: %s (%s x %d ccs%s x %d repeats x %d arms) of %v into %s\n",
		name, m.PlanSummary(runs), cells, len(m.CCs), extra, m.Repeats, len(m.Arms), m.Workload.Duration, m.Workdir)
	runErr := bench.Run(ctx, m, opts)
	code := exitCode(runErr)
	switch {
	case runErr == nil:
	case code == exitUsage:
		fmt.Fprintf(os.Stderr, "%s: %s\n", name, cli.Line(runErr))
		return code
	case code == exitInterrupted:
		fmt.Fprintf(os.Stderr, "%s: interrupted; what was measured is kept in %s, and the same command resumes it\n", name, m.Workdir)
		return code
	case errors.Is(runErr, bench.ErrRunsFailed):
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, runErr)
	default:
		fmt.Fprintf(os.Stderr, "%s: %v\n", name, runErr)
		fmt.Fprintf(os.Stderr, "%s: what was measured is kept in %s; once the cause is fixed, the same command resumes it\n", name, m.Workdir)
		return code
	}
	if !f.noSummary {
		if c := summarise(os.Stdout, m.Workdir); c != exitOK && code == exitOK {
			code = c
		}
		if note := m.ShardSummaryNote(name); note != "" {
			fmt.Fprintln(os.Stderr, note)
		}
		if f.quick && len(quick.Readings) > 0 {
			printFindings(os.Stdout, name, m.Workdir, quick.Readings)
		}
	}
	return code
}

// Exit codes of the matrix commands.
const (
	// exitOK: every run of the matrix was measured.
	exitOK = 0
	// exitFailed: some runs failed (the count is printed, the summary
	// still shows the rest, and the same command redoes them), or the
	// matrix could not go on.
	exitFailed = 1
	// exitUsage: the command line, the environment or the work directory
	// was refused before anything ran.
	exitUsage = 2
	// exitInterrupted: SIGINT or SIGTERM stopped the matrix; the run in
	// progress is redone on resume.
	exitInterrupted = 130
)

// exitCode is the exit code for what bench.Run returned.
func exitCode(err error) int {
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, plan.ErrWorkdir), errors.Is(err, twohost.ErrRefused), errors.Is(err, bench.ErrEnvironment):
		return exitUsage
	case errors.Is(err, results.ErrInterrupted):
		return exitInterrupted
	}
	return exitFailed
}
