package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shakenfist/quicbench/examples/internal/gorun"
	"github.com/shakenfist/quicbench/internal/cli"
	"github.com/shakenfist/quicbench/measure/fallback"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/linkflag"
	"github.com/shakenfist/quicbench/transport"
)

func main() {
	gorun.Follow()
	os.Exit(mainCode())
}

// linkFlags registers the link flags the command has (package
// linkflag's): -profiles, -backend and -seed.
func linkFlags(fs *flag.FlagSet) *linkflag.Flags {
	return linkflag.Register(fs, linkflag.Config{Flags: linkflag.Profiles | linkflag.Backend | linkflag.Seed | linkflag.Emulator, Profiles: "80:10 150:2"})
}

func mainCode() int {
	fallback.MaybeRunRole()
	if err := fallback.Prepare(); err != nil {
		fmt.Fprintf(os.Stderr, "fallback: %v\n", err)
		return 1
	}
	fs := flag.NewFlagSet("fallback", flag.ContinueOnError)
	link := linkFlags(fs)
	losses := fs.String("losses", "0", "per-direction loss levels in percent, space-separated; each profile (which carries no loss of its own) is run at each")
	arms := fs.String("arms", armNames(" "), "arms, space-separated: "+armNames(", "))
	connects := fs.Int("connects", 10, "connects per profile and arm")
	channels := fs.Int("channels", 5, "channels per session (TCP connections in the fallback)")
	giveUp := fs.Duration("give-up", transport.DefaultFallbackGiveUp, "how long the fallback dialer waits for QUIC before it dials TCP")
	gap := fs.Duration("gap", 300*time.Millisecond, "pause between connects, so one connect's teardown does not overlap the next")
	workdir := fs.String("workdir", "results/fallback", "results directory; a rerun skips what is recorded")
	summaryOnly := fs.Bool("summary", false, "only print the summary of -workdir")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: fallback [flags]\n\n"+
			"Connect time of a QUIC-first client that falls back to per-channel TCP, with UDP blocked, "+
			"against TCP directly and against QUIC with UDP open.\n\nflags:\n")
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), shapedlink.ProfileUsage())
	}
	if err := cli.Parse(fs, os.Args[1:]); err != nil {
		return cli.Exit(os.Stderr, "fallback", err)
	}
	if *summaryOnly {
		code := printSummary(*workdir)
		if code == 0 {
			if recs, err := fallback.Load(*workdir); err == nil {
				if line := fallback.Failures(recs); line != "" {
					// Summarising measures nothing, so it does not
					// fail; it says what the records hold.
					fmt.Fprintf(os.Stderr, "fallback: the records hold %s\n", line)
				}
			}
		}
		return code
	}
	cfg, err := buildConfig(link, *losses, *arms, *connects, *channels, *giveUp, *gap, *workdir)
	if err != nil {
		return cli.Exit(os.Stderr, "fallback", err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg.Link.Logger, cfg.Logger, cfg.Progress = log, log, os.Stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := fallback.Run(ctx, cfg); err != nil {
		fmt.Fprintf(os.Stderr, "fallback: %v\n", err)
		fmt.Fprintf(os.Stderr, "fallback: what was measured is kept in %s; the same command resumes it\n", cfg.Workdir)
		if ctx.Err() != nil {
			return 130 // interrupted
		}
		return 1
	}
	if code := printSummary(cfg.Workdir); code != 0 {
		return code
	}
	recs, err := fallback.Load(cfg.Workdir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fallback: %v\n", err)
		return 1
	}
	if line := fallback.Failures(recs); line != "" {
		fmt.Fprintf(os.Stderr, "fallback: %s; the summary shows what was measured, and a rerun measures failed arms again\n", line)
		return 1
	}
	return 0
}

func printSummary(workdir string) int {
	recs, err := fallback.Load(workdir)
	if err == nil {
		err = fallback.Summarise(os.Stdout, recs)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fallback: %v\n", err)
		return 1
	}
	return 0
}

// buildConfig turns the flags' values into the library's Config, with
// errors that name the flags.
func buildConfig(link *linkflag.Flags, losses, arms string, connects, channels int, giveUp, gap time.Duration, workdir string) (fallback.Config, error) {
	c := fallback.Config{Connects: connects, Channels: channels, GiveUp: giveUp, Gap: gap, Workdir: workdir}
	ps, err := link.Profiles()
	if err != nil {
		return c, err
	}
	if c.Link, err = link.Options(); err != nil {
		return c, err
	}
	var ls []float64
	for _, s := range strings.Fields(losses) {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 || v >= 100 {
			return c, fmt.Errorf("loss %q: want a percentage in [0, 100), e.g. -losses \"0 1\"", s)
		}
		ls = append(ls, v)
	}
	if len(ls) == 0 {
		return c, fmt.Errorf("no loss levels: give at least one, e.g. -losses 0")
	}
	for _, p := range ps {
		if p.HasLoss() {
			return c, fmt.Errorf("profile %s carries its own loss: give loss levels with -losses instead", p)
		}
		for _, l := range ls {
			q := p.WithLoss(l)
			if err := q.Validate(); err != nil {
				return c, err
			}
			c.Profiles = append(c.Profiles, q)
		}
	}
	if c.Arms, err = fallback.ParseArms(arms); err != nil {
		return c, err
	}
	switch {
	case connects < 1:
		return c, fmt.Errorf("-connects %d: want at least 1 (the question asks for 10 or more)", connects)
	case channels < 1 || channels > transport.MaxChannels:
		return c, fmt.Errorf("-channels %d: want 1..%d", channels, transport.MaxChannels)
	case giveUp <= 0:
		return c, fmt.Errorf("-give-up %v: want a positive duration", giveUp)
	case gap < 0:
		return c, fmt.Errorf("-gap %v: want zero or more", gap)
	case workdir == "":
		return c, fmt.Errorf("-workdir is empty: name a results directory")
	}
	return c, nil
}

// armNames are fallback's arms, joined by sep.
func armNames(sep string) string {
	var names []string
	for _, a := range fallback.Arms() {
		names = append(names, string(a))
	}
	return strings.Join(names, sep)
}
