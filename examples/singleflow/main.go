package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/shakenfist/quicbench/examples/internal/gorun"
	"github.com/shakenfist/quicbench/internal/cli"
	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/singleflow"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/linkflag"
	"github.com/shakenfist/quicbench/transport/quicreno"
)

func main() {
	gorun.Follow()
	os.Exit(run())
}

func run() int {
	c, workdir, err := parseFlags(os.Args[1:])
	if err != nil {
		return cli.Exit(os.Stderr, "singleflow", err)
	}
	bad := func(err error) int { return cli.Exit(os.Stderr, "singleflow", err) }
	rec := singleflow.NewRecord(c)
	prior, err := rec.Resume(workdir)
	if err != nil {
		return bad(err)
	}
	c.StateDir = filepath.Join(workdir, "states")
	if err := os.MkdirAll(c.StateDir, 0o755); err != nil {
		return bad(err)
	}
	if err := shapedlink.Reexec(); err != nil {
		fmt.Fprintf(os.Stderr, "singleflow: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	skip, measured := singleflow.Measured(prior)
	c.Skip = skip
	total := len(c.Profiles)*len(c.Losses)*len(c.Flows)*c.Repeats - measured
	if len(prior) > 0 {
		fmt.Fprintf(os.Stderr, "singleflow: resuming %s: %d runs measured, %d to run\n", workdir, measured, total)
	}
	all := prior
	n := 0
	var werr error
	_, err = singleflow.Run(ctx, c, func(r singleflow.Result) {
		n++
		all = singleflow.Replace(all, r)
		if werr == nil {
			werr = rec.Write(workdir, all, false)
		}
		if r.Error != "" {
			fmt.Fprintf(os.Stderr, "[%d/%d] %s %g%% %s r%d: FAILED: %s\n", n, total, r.Profile, r.Loss, r.Flow, r.Repeat, r.Error)
			return
		}
		fmt.Fprintf(os.Stderr, "[%d/%d] %s %g%% %s r%d: %.2f Mbit/s, iw %.0f, %d loss episodes\n", n, total, r.Profile, r.Loss, r.Flow, r.Repeat, r.GoodputMbit, r.InitialWindow, len(r.Backoffs))
	})
	failed := 0
	for _, r := range all {
		if r.Error != "" {
			failed++
		}
	}
	if len(all) > 0 {
		if werr = errors.Join(werr, rec.Write(workdir, all, true)); werr != nil {
			fmt.Fprintf(os.Stderr, "singleflow: %v\n", werr)
			return 1
		}
		fmt.Print(singleflow.Markdown(singleflow.Summarise(all), "tcp-"+quicreno.Name, "quic"))
	}
	switch {
	case err != nil && ctx.Err() != nil:
		fmt.Fprintf(os.Stderr, "singleflow: interrupted after %d of %d runs; what was measured is in %s, and the same command resumes it\n", n, total, workdir)
		return 130
	case err != nil:
		fmt.Fprintf(os.Stderr, "singleflow: %v\n", err)
		return 1
	case failed > 0:
		fmt.Fprintf(os.Stderr, "singleflow: %d of %d runs failed (kept in %s with their reasons; the same command runs them again)\n", failed, len(all), singleflow.RecordFile)
		return 1
	}
	return 0
}

// parseFlags reads the command line into a validated configuration and
// the work directory.
func parseFlags(args []string) (c singleflow.Config, workdir string, err error) {
	c = singleflow.Defaults()
	fs := flag.NewFlagSet("singleflow", flag.ContinueOnError)
	lf := linkflag.Register(fs, linkflag.Config{Flags: linkflag.Profiles | linkflag.Backend | linkflag.Seed | linkflag.Emulator, Profiles: "80:10 150:2",
		KeepAwake: true})
	losses := fs.String("losses", "0 1 2", "loss percentages, each applied to both directions of every profile")
	flows := fs.String("flows", flowNames(singleflow.DefaultFlows()), "flows: quic, or tcp-<controller>")
	fs.IntVar(&c.Repeats, "repeats", c.Repeats, "runs per flow and cell")
	fs.DurationVar(&c.Duration, "duration", c.Duration, "length of each flow")
	fs.DurationVar(&c.Warmup, "warmup", c.Warmup, "start of each flow left out of its goodput")
	wd := fs.String("workdir", "results/singleflow", "where results.json (each run as it ends) and summary.md are written; a rerun with the same settings resumes it")
	fs.Var((*uint32Flag)(&c.Controller.BetaPercent), "quicreno-beta", "quicreno: `percent` of the window kept after a loss")
	fs.Var((*uint32Flag)(&c.Controller.InitialWindow), "quicreno-iw", "quicreno: initial window, in `packets`")
	pacing := fs.Bool("quicreno-pacing", c.Controller.Pacing, "quicreno: ask the kernel to pace")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: singleflow [flags]\n\nOne bulk flow at a time per controller: goodput, back-off after a loss, initial window.\n\nflags:\n")
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), shapedlink.ProfileUsage())
	}
	if err := cli.Parse(fs, args); err != nil {
		return c, "", err
	}
	if c.Profiles, err = lf.Profiles(); err != nil {
		return c, "", err
	}
	if c.Link, err = lf.Options(); err != nil {
		return c, "", err
	}
	c.Losses = nil
	for _, f := range strings.Fields(*losses) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return c, "", fmt.Errorf("-losses: %q is not a number", f)
		}
		c.Losses = append(c.Losses, v)
	}
	if c.Flows, err = singleflow.ParseFlows(strings.Fields(*flows)); err != nil {
		return c, "", err
	}
	c.Controller.Pacing = *pacing
	if err := c.Validate(); err != nil {
		return c, "", err
	}
	for _, f := range c.Flows {
		if cc, _ := f.PinnedCC(); cc == quicreno.Name {
			if err := quicreno.CheckLoad(); err != nil {
				return c, "", fmt.Errorf("flow %s: %w", f, err)
			}
		}
	}
	return c, *wd, nil
}

func flowNames(arms []measure.Arm) string {
	var names []string
	for _, a := range arms {
		names = append(names, string(a))
	}
	return strings.Join(names, " ")
}

// uint32Flag is a flag holding a uint32: a value beyond its range is an
// error, not wrapped around.
type uint32Flag uint32

func (f *uint32Flag) String() string { return strconv.FormatUint(uint64(*f), 10) }

func (f *uint32Flag) Set(s string) error {
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		return fmt.Errorf("give a whole number from 0 to %d", uint32(math.MaxUint32))
	}
	*f = uint32Flag(v)
	return nil
}
