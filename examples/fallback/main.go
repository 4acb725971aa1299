package main

import (
	"context"
	"flag"
	"fmt"
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
	"github.com/shakenfist/quicbench/transport"
)

// config is what one invocation measures.
type config struct {
	profiles []shapedlink.Profile
	arms     []string
	connects int
	channels int
	giveUp   time.Duration
	gap      time.Duration
	workdir  string
	link     shapedlink.Options
}

// job is one profile and arm.
type job struct {
	profile shapedlink.Profile
	arm     string
}

func (c config) dir(p shapedlink.Profile) string {
	return filepath.Join(c.workdir, profileDir(float64(p.RTT)/1e6, p.RateMbit, p.LossPct)+results.ProfileSuffix(p.WithLoss(0).String()))
}

func (c config) recordPath(j job) string { return filepath.Join(c.dir(j.profile), j.arm+".json") }

func (c config) plan() []job {
	var out []job
	for _, p := range c.profiles {
		for _, a := range c.arms {
			out = append(out, job{p, a})
		}
	}
	return out
}

func main() { os.Exit(mainCode()) }

func mainCode() int {
	maybeRunRole()
	if err := prepare(); err != nil {
		fmt.Fprintf(os.Stderr, "fallback: %v\n", err)
		return 1
	}
	fs := flag.NewFlagSet("fallback", flag.ContinueOnError)
	profiles := fs.String("profiles", "80:10 150:2", "link profiles, "+shapedlink.ProfileGrammar+", space-separated; the options are listed below")
	losses := fs.String("losses", "0", "per-direction loss levels in percent, space-separated; each profile is run at each")
	arms := fs.String("arms", strings.Join(Arms(), " "), "arms, space-separated: "+strings.Join(Arms(), ", "))
	connects := fs.Int("connects", 10, "connects per profile and arm")
	channels := fs.Int("channels", 5, "channels per session (TCP connections in the fallback)")
	giveUp := fs.Duration("give-up", transport.DefaultFallbackGiveUp, "how long the fallback dialer waits for QUIC before it dials TCP")
	gap := fs.Duration("gap", 300*time.Millisecond, "pause between connects, so one connect's teardown does not overlap the next")
	workdir := fs.String("workdir", "results/fallback", "results directory; a rerun skips what is recorded")
	backend := fs.String("backend", "", "link backend: netem, emulator, or empty to choose")
	seed := fs.Uint64("seed", 0, "emulator loss seed (0: random, recorded)")
	summaryOnly := fs.Bool("summary", false, "only print the summary of -workdir")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: fallback [flags]\n\n"+
			"Connect time of a QUIC-first client that falls back to per-channel TCP, with UDP blocked, "+
			"against TCP directly and against QUIC with UDP open.\n\nflags:\n")
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), shapedlink.ProfileUsage())
	}
	if err := fs.Parse(os.Args[1:]); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "fallback: unexpected arguments %q (all options are flags)\n", fs.Args())
		return 2
	}
	if *summaryOnly {
		code := printSummary(*workdir)
		if code == 0 {
			if recs, err := loadRecords(*workdir); err == nil {
				if line := failureLine(recs); line != "" {
					// Summarising measures nothing, so it does not
					// fail; it says what the records hold.
					fmt.Fprintf(os.Stderr, "fallback: the records hold %s\n", line)
				}
			}
		}
		return code
	}
	cfg, err := buildConfig(*profiles, *losses, *arms, *connects, *channels, *giveUp, *gap, *workdir, *backend, *seed)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fallback: %v\n", err)
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg.link.Logger = log
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := runAll(ctx, cfg, log); err != nil {
		fmt.Fprintf(os.Stderr, "fallback: %v\n", err)
		fmt.Fprintf(os.Stderr, "fallback: what was measured is kept in %s; the same command resumes it\n", cfg.workdir)
		if ctx.Err() != nil {
			return 130 // interrupted
		}
		return 1
	}
	if code := printSummary(cfg.workdir); code != 0 {
		return code
	}
	recs, err := loadRecords(cfg.workdir)
	if err != nil {
		fmt.Fprintf(os.Stderr, "fallback: %v\n", err)
		return 1
	}
	if line := failureLine(recs); line != "" {
		fmt.Fprintf(os.Stderr, "fallback: %s; the summary shows what was measured, and a rerun measures failed arms again\n", line)
		return 1
	}
	return 0
}

// failureLine is "N of M measurements failed (which)" for recs, or "" when
// none failed. A measurement is one connect: every connect of an arm
// recorded as failed counts, and so does each connect that returned an
// error in an arm that was measured.
func failureLine(recs []Record) string {
	failed, total := 0, 0
	var which []string
	for _, r := range recs {
		n := max(r.Connects, len(r.Results))
		total += n
		if r.Failed != "" {
			failed += n
			which = append(which, fmt.Sprintf("%s %s: arm failed", r.Profile, r.Arm))
			continue
		}
		bad := 0
		for _, c := range r.Results {
			if c.Err != "" {
				bad++
			}
		}
		// Connects the client never got to count as failed too.
		bad += max(0, r.Connects-len(r.Results))
		if bad > 0 {
			failed += bad
			which = append(which, fmt.Sprintf("%s %s: %d of %d connects", r.Profile, r.Arm, bad, n))
		}
	}
	if failed == 0 {
		return ""
	}
	return fmt.Sprintf("%d of %d measurements (connects) failed (%s)", failed, total, strings.Join(which, "; "))
}

func printSummary(workdir string) int {
	recs, err := loadRecords(workdir)
	if err == nil {
		err = Summarise(os.Stdout, recs)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "fallback: %v\n", err)
		return 1
	}
	return 0
}

func buildConfig(profiles, losses, arms string, connects, channels int, giveUp, gap time.Duration, workdir, backend string, seed uint64) (config, error) {
	c := config{connects: connects, channels: channels, giveUp: giveUp, gap: gap, workdir: workdir,
		link: shapedlink.Options{Backend: shapedlink.Backend(backend), Seed: seed}}
	ps, err := shapedlink.ParseProfiles(profiles)
	if err != nil {
		return c, err
	}
	if len(ps) == 0 {
		return c, fmt.Errorf("no profiles: give at least one, e.g. -profiles \"80:10\"")
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
			c.profiles = append(c.profiles, q)
		}
	}
	if c.arms, err = parseArms(arms); err != nil {
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
	switch c.link.Backend {
	case shapedlink.BackendAuto, shapedlink.BackendNetem, shapedlink.BackendEmulator:
	default:
		return c, fmt.Errorf("-backend %q: want netem, emulator or empty", backend)
	}
	return c, nil
}

// runAll measures every job not yet recorded. A job recorded with other
// settings is refused rather than mixed in; a job recorded as failed is
// measured again.
func runAll(ctx context.Context, cfg config, log *slog.Logger) error {
	plan := cfg.plan()
	for i, j := range plan {
		path := cfg.recordPath(j)
		prev, err := existing(path)
		if err != nil {
			return err
		}
		if prev != nil {
			if prev.Connects != cfg.connects || prev.Channels != cfg.channels || prev.GiveUp != cfg.giveUp {
				return fmt.Errorf("%s was recorded with %d connects, %d channels, give-up %v, not %d, %d, %v: use another -workdir",
					path, prev.Connects, prev.Channels, prev.GiveUp, cfg.connects, cfg.channels, cfg.giveUp)
			}
			if prev.Failed == "" {
				fmt.Fprintf(os.Stderr, "[%d/%d] %s %s: recorded, skipped\n", i+1, len(plan), j.profile, j.arm)
				continue
			}
		}
		fmt.Fprintf(os.Stderr, "[%d/%d] %s %s: %d connects\n", i+1, len(plan), j.profile, j.arm, cfg.connects)
		rec, err := runJob(ctx, cfg, j, log)
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted during %s %s: %w", j.profile, j.arm, context.Cause(ctx))
		}
		if err != nil {
			rec.Failed = err.Error()
			log.Warn("arm failed; recorded as unmeasured", "profile", j.profile.String(), "arm", j.arm, "err", err)
		}
		if err := results.WriteJSON(path, rec); err != nil {
			return err
		}
	}
	return nil
}
