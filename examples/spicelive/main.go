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
	"github.com/shakenfist/quicbench/measure/benchcmd"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/spicelive"
	"github.com/shakenfist/quicbench/measure/spicelive/summary"
	"github.com/shakenfist/quicbench/measure/spicelive/xsession"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/linkflag"
	"github.com/shakenfist/quicbench/spicelike"
)

func main() {
	gorun.Follow()
	// A run's processes are this binary again: the replay's and the
	// synthetic bench's roles, and the live session's.
	spicelive.MaybeRunRole()
	os.Exit(mainCode(os.Args[1:], os.Stdout, os.Stderr))
}

func mainCode(args []string, stdout, stderr io.Writer) int {
	c, m, err := parseFlags(args, stderr, os.Getenv)
	if err != nil {
		return cli.Exit(stderr, "spicelive", err)
	}
	if m.summary {
		return fromWorkdir(c.Workdir, stderr, func(c spicelive.Config) error { return summary.Summarise(stdout, c) })
	}
	if m.verdicts != "" {
		return verdicts(m.verdicts, stdout, stderr)
	}
	if m.samples != "" {
		if err := summary.CheckSamplesDir(m.samples); err != nil {
			return cli.Exit(stderr, "spicelive", err)
		}
		return fromWorkdir(c.Workdir, stderr, func(c spicelive.Config) error { return summary.WriteSamples(m.samples, c) })
	}
	err = c.CheckPrograms(m.record != "")
	if err == nil {
		err = spicelive.Prepare() // may re-execute this binary in a user namespace
	}
	if err != nil {
		fmt.Fprintln(stderr, "spicelive:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if m.record != "" {
		return record(ctx, c, m, args, stdout, stderr, log)
	}
	err = spicelive.Run(ctx, c, stderr, log)
	switch {
	case ctx.Err() != nil || errors.Is(err, results.ErrInterrupted):
		fmt.Fprintf(stderr, "spicelive: interrupted; what was measured is kept in %s and the same command resumes it\n", c.Workdir)
		return 130
	case errors.Is(err, spicelive.ErrWorkdir):
		fmt.Fprintln(stderr, "spicelive:", err)
		return 2
	case err != nil && !errors.Is(err, spicelive.ErrRunsFailed):
		fmt.Fprintln(stderr, "spicelive:", err)
		if _, serr := os.Stat(c.Workdir); serr == nil {
			fmt.Fprintf(stderr, "spicelive: what was measured is kept in %s; the same command resumes it\n", c.Workdir)
		}
		return 1
	}
	// The summary reports what was measured, failed runs included; how
	// many failed is said after it.
	if err = errors.Join(err, summary.Summarise(stdout, c)); err != nil {
		fmt.Fprintln(stderr, "spicelive:", err)
		return 1
	}
	return 0
}

// record records -record's workload (spicelive.WriteRecording).
func record(ctx context.Context, c spicelive.Config, m mode, args []string, stdout, stderr io.Writer, log *slog.Logger) int {
	fmt.Fprintf(stderr, "recording the %s workload's session over %s (tcp arm)\n", m.record, c.Reference)
	path, rp, err := spicelive.WriteRecording(ctx, c, m.record, m.recordSpan, args, log)
	if err != nil {
		fmt.Fprintln(stderr, "spicelive:", err)
		if ctx.Err() != nil {
			return 130
		}
		return 1
	}
	fmt.Fprintf(stdout, "%s: span %v, %d keys, display %.2f Mbit/s to the client\n", path, rp.Span, rp.Keys, rp.ChannelMbit("display", true))
	return 0
}

// mode is what the command does instead of running the matrix: -summary,
// -samples (the directory), -verdicts (a samples directory), -record (the
// workload) and -record-span.
type mode struct {
	summary    bool
	samples    string
	verdicts   string
	record     string
	recordSpan time.Duration
}

// fromWorkdir runs do on the settings a work directory was made with.
func fromWorkdir(workdir string, stderr io.Writer, do func(spicelive.Config) error) int {
	c, err := spicelive.LoadConfig(workdir)
	if err != nil {
		fmt.Fprintf(stderr, "spicelive: %s holds no spicelive runs: %v\n", workdir, err)
		return 1
	}
	if err := do(c); err != nil {
		fmt.Fprintln(stderr, "spicelive:", err)
		return 1
	}
	return 0
}

// verdicts prints the figures and verdicts recomputed from a samples
// directory (summary.VerdictsFromSamples).
func verdicts(dir string, stdout, stderr io.Writer) int {
	v, err := summary.VerdictsFromSamples(dir)
	if err == nil {
		err = v.WriteMarkdown(stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, "spicelive:", err)
		return 1
	}
	return 0
}

// linkFlags registers linkflag's -profiles ($PROFILES its default when
// set and not empty), -backend and -seed.
func linkFlags(fs *flag.FlagSet, getenv func(string) string) *linkflag.Flags {
	return linkflag.Register(fs, linkflag.Config{Flags: linkflag.Profiles | linkflag.Backend | linkflag.Seed | linkflag.Emulator,
		Profiles: "80:10 150:2", ProfilesEnv: "PROFILES", LookupEnv: func(name string) (string, bool) {
			v := getenv(name)
			return v, v != ""
		}})
}

// parseFlags reads the command line. Environment variables named like the
// reference bench's (PROFILES, LOSSES, REPEATS, DURATION, WARMUP,
// WORKDIR) give the defaults, as the other matrix commands do.
func parseFlags(args []string, stderr io.Writer, getenv func(string) string) (spicelive.Config, mode, error) {
	fs := flag.NewFlagSet("spicelive", flag.ContinueOnError)
	fs.SetOutput(stderr)
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	link := linkFlags(fs, getenv)
	losses := fs.String("losses", env("LOSSES", "0 1"), "per-direction loss levels in percent, space-separated; each profile (which carries no loss of its own) is run at each (env LOSSES)")
	arms := fs.String("arms", "tcp quic quic-per-channel", spicelive.ArmsHelp())
	order := fs.String("order", "", "the arms' order in each repeat: random (shuffled anew for each cell and repeat) or fixed (as -arms lists them); "+
		"default the work directory's, random for a new one")
	orderSeed := fs.Uint64("order-seed", 0, "with -order random, the shuffle's seed (default: the work directory's, or chosen when it is made; the summary names it)")
	readings := fs.String("readings", strings.Join(spicelive.AllReadings(), " "), "readings per cell and arm: live, replay, synthetic")
	repeats := fs.Int("repeats", atoi(env("REPEATS", "5")), "repeats per cell, arm and reading (env REPEATS)")
	duration := &benchcmd.Seconds{D: benchcmd.ParseSeconds(env("DURATION", "45"))}
	fs.Var(duration, "duration", "length of each run in seconds (or a duration such as 45s), warm-up included; a live run types for this long "+
		"(env DURATION); the default below is without -display: with a -display workload it is "+spicelive.DefaultDisplayDuration.String()+", for 100 timed keys")
	warmup := &benchcmd.Seconds{D: benchcmd.ParseSeconds(env("WARMUP", "5"))}
	fs.Var(warmup, "warmup", "leading part of each run left out of the figures, in seconds or as a duration (env WARMUP)")
	cc := fs.String("cc", "reno", "TCP congestion control of the tcp and tcp-mux arms: a kernel controller (reno, cubic, bbr, or another tcp_available_congestion_control lists), "+
		"or quicreno, a BPF controller that does what quic-go's does (needs root on the host)")
	keyInterval := fs.Duration("key-interval", 500*time.Millisecond, "time between keystrokes; a key not answered before the next one is counted, not timed")
	busyInterval := fs.Duration("busy-interval", 50*time.Millisecond, "time between the busy xterm's lines")
	settle := fs.Duration("settle", 2*time.Second, "wait after the session is up before typing")
	reference := fs.String("reference", "1:100", "link over which the session replayed by the replay reading is recorded (tcp arm)")
	control := fs.Bool("control", false, "run the control instead of the matrix: a live session on the tcp arm at each of -profiles (default "+
		strconv.Quote(spicelive.DefaultControlProfiles)+", no loss), checked for the round trip's change and for busy draws kept out")
	pixel := fs.Bool("pixel", false, "also time each live key to the first change of the typing xterm's pixels in spicy's window (key-to-pixel), beside key-to-draw")
	display := fs.String("display", "none", "display workload beside the typed-into xterm, to fill the display channel: none, video or images")
	displaySize := fs.String("display-size", "", fmt.Sprintf("the display workload's window, WIDTHxHEIGHT in pixels (default %dx%d for video, %dx%d for images)",
		spicelive.DefaultVideoWidth, spicelive.DefaultVideoHeight, spicelive.DefaultImageWidth, spicelive.DefaultImageHeight))
	frameRate := fs.Int("frame-rate", spicelive.DefaultFrameRate, "frames a second of -display video")
	imageInterval := fs.Duration("image-interval", spicelive.DefaultImageInterval, "time between the images of -display images")
	keyTimeout := fs.Duration("key-timeout", spicelive.DefaultKeyTimeout, "with a -display workload, how long a key may take to be drawn: "+
		"keys are told apart by their glyphs, so they may overlap; after the typing the run waits for the last keys' answers up to this long, and a key not answered within it counts at it")
	settings := spicelive.SettingsFlags(fs)
	workdir := fs.String("workdir", env("WORKDIR", "results/spicelive"), "results directory; a rerun resumes it (env WORKDIR)")
	summaryOnly := fs.Bool("summary", false, "only print the summary of -workdir")
	samples := fs.String("samples", "", "only write the per-key samples of -workdir's live runs into this directory ("+summary.KeysCSV+", "+summary.RunsCSV+"): every timed key's figures and where its answer waited")
	verdictsDir := fs.String("verdicts", "", "only print the figures and every pair of arms' verdict recomputed from this samples directory's "+
		summary.KeysCSV+" and "+summary.RunsCSV+" (as -samples writes them, beside "+spicelive.SettingsFile+")")
	replay := fs.String("replay", "", "the session the replay reading plays: reference (recorded over -reference once per -workdir) or a shipped recording ("+
		strings.Join(spicelike.Recordings(), ", ")+"); default the -display workload's recording, reference with -display none")
	record := fs.String("record", "", "only record the session of a display workload (video or images) over -reference (tcp arm) and write it to "+
		"-workdir/<workload>.json.gz, as the recordings spicelike ships were made")
	recordSpan := fs.Duration("record-span", 0, "with -record, keep only the recording's first -record-span (0 keeps it all)")
	fs.Usage = func() { usage(fs, stderr) }
	if err := cli.Parse(fs, args); err != nil {
		return spicelive.Config{}, mode{}, err
	}
	m := mode{summary: *summaryOnly, samples: *samples, verdicts: *verdictsDir, record: *record, recordSpan: *recordSpan}
	errs := spicelive.UnusedFlags(fs, *summaryOnly || *samples != "" || *verdictsDir != "", *control, *readings)
	if *record != "" {
		errs = append(errs, spicelive.RecordFlags(fs, *record, *recordSpan)...)
		*display, *readings, *arms, *losses = *record, spicelive.ReadingReplay, "tcp", "0"
	} else if cli.Given(fs, "record-span") {
		errs = append(errs, errors.New("-record-span goes with -record: leave it out"))
	}
	if *control {
		link.SetProfileDefault(spicelive.DefaultControlProfiles)
	}
	c := spicelive.Config{Repeats: *repeats, Duration: duration.D, Warmup: warmup.D, CC: *cc, KeyInterval: *keyInterval,
		BusyInterval: *busyInterval, Settle: *settle, Reference: *reference, Control: *control,
		Workdir: *workdir, SessionTimeout: time.Minute, Pixel: *pixel, Order: *order, OrderSeed: *orderSeed}
	errs = append(errs, settings(&c))
	errs = append(errs, c.SetDisplayFlags(*display, *displaySize, *frameRate, *imageInterval, *keyTimeout, func(name string) bool { return cli.Given(fs, name) }))
	if c.Display != xsession.DisplayNone && !cli.Given(fs, "duration") && getenv("DURATION") == "" {
		c.Duration = spicelive.DefaultDisplayDuration
	}
	if c.Control {
		errs = append(errs, spicelive.ControlLists(losses, arms, readings))
	}
	errs = append(errs, c.SetRecording(*replay, *record, *readings))
	errs = append(errs, c.SetLinkFlags(link, *losses, *arms, *readings))
	return c, m, errors.Join(errs...)
}

// usage prints spicelive's help: what it does, its flags and the link
// profile's form.
func usage(fs *flag.FlagSet, stderr io.Writer) {
	fmt.Fprintf(stderr, "usage: spicelive [flags]\n\nA real SPICE session (Xspice, spicy) over each arm of the tunnel on a shaped link: "+
		"key-to-draw latency, beside a replay of the session's shape and the synthetic bench.\n\nflags:\n")
	fs.PrintDefaults()
	fmt.Fprint(stderr, shapedlink.ProfileUsage())
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1 // refused by validation, with the reason
	}
	return n
}
