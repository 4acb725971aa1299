package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/shakenfist/quicbench/examples/internal/gorun"
	"github.com/shakenfist/quicbench/internal/cli"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/calibrate"
	"github.com/shakenfist/quicbench/shapedlink/linkflag"
)

// linkFlags registers the link flags the command has (package
// linkflag's): -profiles, -backend, -offload, -seed, -keep-awake and
// -departure-window, with def's profiles, offload mode and seed (1, so
// that a calibration repeats) as their defaults.
func linkFlags(fs *flag.FlagSet, def calibrate.Config) *linkflag.Flags {
	var ps []string
	for _, p := range def.Profiles {
		ps = append(ps, p.String())
	}
	return linkflag.Register(fs, linkflag.Config{Flags: linkflag.Profiles | linkflag.Backend | linkflag.Offload | linkflag.Seed | linkflag.Emulator,
		Profiles: strings.Join(ps, " "), Offload: def.Link.Offload, Seed: def.Link.Seed})
}

// config is the command line: the link flags, the flags read in
// checkFlags and makePlan as given, and the rest read into cfg.
type config struct {
	link                                                          *linkflag.Flags
	sweep, iperf, qdisc, qdiscAt, gsoLoss, quicGSO, render, noise string
	json, wakeProbe                                               bool
	cfg                                                           calibrate.Config
}

func main() {
	gorun.Follow()
	c := config{cfg: calibrate.DefaultConfig()}
	c.link = linkFlags(flag.CommandLine, c.cfg)
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: calibrate [flags]\n\nMeasures the link against its configuration.\n\nflags:\n")
		flag.PrintDefaults()
		fmt.Fprint(flag.CommandLine.Output(), shapedlink.ProfileUsage())
	}
	k := &c.cfg
	flag.IntVar(&k.Echoes, "echoes", k.Echoes, "idle round trips per profile, for each probe (at least 200 for the targets)")
	flag.DurationVar(&k.Interval, "interval", k.Interval, "spacing of the idle round-trip probes")
	flag.BoolVar(&k.Bare, "bare", k.Bare, "measure the same ICMP probe over an unshaped veth pair before each profile (the machine's own share of the round trip)")
	flag.DurationVar(&k.Bulk, "bulk", k.Bulk, "duration of each bulk TCP flow (the first third is discarded)")
	flag.IntVar(&k.LossPackets, "losspkts", k.LossPackets, "datagrams sent for the loss measurement")
	flag.DurationVar(&k.TimeVarying, "timevarying", k.TimeVarying, "how long a profile with a trace or a schedule (down) is flooded or probed to measure it")
	flag.IntVar(&k.JitterProbes, "jitter-probes", k.JitterProbes, "one-way probes measuring a jittered profile's delay distribution, 4x the jitter apart (0 skips it)")
	flag.StringVar(&c.sweep, "sweep", rateList(k.SweepRates), `rates (Mbit/s) for the highest-sustained-rate search at 5 ms RTT; "" skips it`)
	flag.StringVar(&c.iperf, "iperf3", "", `rates (Mbit/s) at 5 ms RTT for one iperf3 Cubic flow each, plus an unlimited link and the bare veth pair with its offloads on and wire-sized, e.g. "10 100 1000 2000"; needs iperf3`)
	flag.StringVar(&c.qdisc, "qdisc", "", `queue disciplines to measure under one saturating Cubic flow with a sparse flow beside it, e.g. "fifo codel fq_codel"; "" skips it`)
	flag.StringVar(&c.qdiscAt, "qdisc-profile", k.QdiscProfile.String(), "the profile the -qdisc measurements use (the discipline is added to both directions)")
	flag.StringVar(&c.noise, "noise", "off", "off, on or both: measure each profile's idle round trip (bare pair, link, emulator lateness) with a background load running (on), or without and then with it (both). The load: "+calibrate.NoiseLoad)
	flag.DurationVar(&k.TraceLate, "trace-late", 0, "catch an emulator stall in the act: while each idle round trip is probed, trace the kernel's scheduler, interrupt and workqueue events (tracefs, mounted if needed) and stop at the first frame the emulator sends later than this (e.g. 1ms); the trace is saved in -trace-dir with a short reading in the report, and tracing is left as it was found. Needs root; 0 traces nothing")
	flag.StringVar(&k.TraceDir, "trace-dir", "", "where -trace-late saves its traces (default the working directory)")
	flag.BoolVar(&c.json, "json", false, "print the figures as JSON instead of a table")
	flag.StringVar(&c.render, "render", "", "print the table for a report saved with -json (measures nothing)")
	flag.BoolVar(&c.wakeProbe, "wake-probe", false, "measure only how late this host wakes an idle CPU for a timer, the probe -keep-awake auto decides by, and print its figures, limits and decision (with -json as JSON); builds no link")
	flag.StringVar(&c.gsoLoss, "gsoloss", "", `a lossy profile (e.g. "5:2000:0.1") across which a sender with UDP_SEGMENT floods numbered datagrams, the receiver counting each; "" skips it`)
	flag.Float64Var(&k.GSOPacePct, "gsoloss-pace", k.GSOPacePct, "the -gsoloss sender's pace, in percent of the link rate")
	flag.DurationVar(&k.GSOTime, "gsoloss-time", k.GSOTime, "how long the -gsoloss sender sends")
	flag.StringVar(&c.quicGSO, "quicgso", "", `a profile (e.g. "5:1000:1") across which one quic-go bulk transfer runs for -bulk with quic-go's GSO on; "" skips it`)
	err := cli.Parse(flag.CommandLine, os.Args[1:])
	if err == nil {
		err = checkFlags(&c)
	}
	if err != nil {
		os.Exit(cli.Exit(os.Stderr, "calibrate", err))
	}
	if c.render != "" {
		os.Exit(render(c.render))
	}
	if c.wakeProbe {
		os.Exit(wakeProbe(os.Stdout, c.json))
	}
	// Building links needs privilege: as an ordinary user this re-executes
	// the command inside a user and network namespace of its own and exits
	// with its status. Elsewhere than Linux, Run refuses.
	if runtime.GOOS == "linux" {
		if err := shapedlink.Reexec(); err != nil {
			fmt.Fprintln(os.Stderr, "calibrate:", err)
			os.Exit(1)
		}
	}
	if err := makePlan(&c); err != nil {
		os.Exit(cli.Exit(os.Stderr, "calibrate", errors.New(strings.TrimPrefix(err.Error(), "calibrate: "))))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	k.Logger, k.Link.Logger = log, log
	rep, err := calibrate.Run(ctx, c.cfg)
	if err != nil {
		say(err)
		if ctx.Err() != nil {
			os.Exit(130) // interrupted
		}
		os.Exit(1)
	}
	if c.json {
		if err := calibrate.WriteJSON(os.Stdout, rep); err != nil {
			fmt.Fprintln(os.Stderr, "calibrate:", err)
			os.Exit(1)
		}
	} else {
		_ = calibrate.WriteTable(os.Stdout, rep)
	}
	if failed, total := rep.Failures(); len(failed) > 0 {
		fmt.Fprintf(os.Stderr, "calibrate: %s; the figures above are what was measured\n", calibrate.FailureLine(failed, total))
		os.Exit(1)
	}
}

// checkFlags reads the link flags and the flags that say what to measure
// beyond the profiles into c.cfg, refusing what they cannot mean.
func checkFlags(c *config) error {
	k := &c.cfg
	var err error
	if k.Link, err = c.link.Options(); err != nil {
		return err
	}
	// The bare pairs have no emulator: Config, not Link, carries its
	// settings.
	k.KeepAwake, k.KeepAwakeAuto, k.DepartureWindow = k.Link.EmulatorKeepAwake, k.Link.EmulatorKeepAwakeAuto, k.Link.EmulatorDepartureWindow
	k.Link.EmulatorKeepAwake, k.Link.EmulatorKeepAwakeAuto, k.Link.EmulatorDepartureWindow = false, false, 0
	if k.Noise, err = calibrate.ParseNoise(c.noise); err != nil {
		return fmt.Errorf("-noise: %w", err)
	}
	if k.GSOLoss, err = fixedProfile("-gsoloss", c.gsoLoss); err != nil {
		return err
	}
	if k.QUICGSO, err = fixedProfile("-quicgso", c.quicGSO); err != nil {
		return err
	}
	if !(k.GSOPacePct > 0) || k.GSOPacePct > 100 {
		return fmt.Errorf("-gsoloss-pace %g: the sender's pace is a percentage of the rate, above 0 and at most 100 (below 100 leaves room for the bursts of each write)", k.GSOPacePct)
	}
	if k.GSOTime < 500*time.Millisecond || k.GSOTime > 10*time.Minute {
		return fmt.Errorf("-gsoloss-time %v: give the sender between 500ms and 10m", k.GSOTime)
	}
	if k.Echoes < 1 || k.LossPackets < 1 || k.JitterProbes < 0 || k.Bulk < 300*time.Millisecond || k.Interval < time.Millisecond || k.Interval > time.Second {
		return errors.New("-echoes and -losspkts must be positive, -jitter-probes not negative, -bulk at least 300ms and -interval between 1ms and 1s")
	}
	return nil
}

// fixedProfile reads the profile of -gsoloss or -quicgso; "" is none.
// A profile calibrate.CheckFixed refuses is refused.
func fixedProfile(flagName, s string) (*shapedlink.Profile, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	p, err := shapedlink.ParseProfile(s)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flagName, err)
	}
	if err := calibrate.CheckFixed(p); err != nil {
		return nil, fmt.Errorf("%s %q: %w", flagName, s, err)
	}
	return &p, nil
}

// say prints err as the command's one line, its "calibrate: " once.
func say(err error) {
	fmt.Fprintln(os.Stderr, "calibrate:", strings.TrimPrefix(err.Error(), "calibrate: "))
}

// makePlan reads c's lists into c.cfg and checks that there is something
// to measure and what it needs.
func makePlan(c *config) (err error) {
	k := &c.cfg
	k.Profiles = nil
	if strings.TrimSpace(c.link.ProfileText()) != "" { // -profiles "" leaves the other series
		if k.Profiles, err = c.link.Profiles(); err != nil {
			return err
		}
	}
	if k.SweepRates, err = parseRates("-sweep", c.sweep); err != nil {
		return err
	}
	if k.IperfRates, err = parseRates("-iperf3", c.iperf); err != nil {
		return err
	}
	k.Qdiscs = strings.Fields(c.qdisc)
	for _, d := range k.Qdiscs {
		if !calibrate.ValidQdisc(d) {
			return fmt.Errorf("-qdisc names %q; the disciplines are fifo, codel and fq_codel", d)
		}
	}
	if len(k.Qdiscs) > 0 {
		if k.QdiscProfile, err = shapedlink.ParseProfile(c.qdiscAt); err != nil {
			return fmt.Errorf("-qdisc-profile: %w", err)
		}
	}
	return k.Validate() // what Run would refuse (nothing to measure, no iperf3), refused before it
}

// parseRates reads a space-separated list of positive rates in Mbit/s.
func parseRates(flagName, s string) ([]float64, error) {
	var rates []float64
	for _, f := range strings.Fields(s) {
		r, err := strconv.ParseFloat(f, 64)
		if err != nil || !(r > 0) || r > 100000 {
			return nil, fmt.Errorf("%s: %q is not a rate in Mbit/s between 0 and 100000", flagName, f)
		}
		rates = append(rates, r)
	}
	return rates, nil
}

// rateList is rates as parseRates reads them.
func rateList(rates []float64) string {
	var s []string
	for _, r := range rates {
		s = append(s, strconv.FormatFloat(r, 'g', -1, 64))
	}
	return strings.Join(s, " ")
}

// maxReportBytes bounds the report -render reads: a -json report of every
// measurement is tens of kilobytes.
const maxReportBytes = 64 << 20

// render prints the table for the report saved with -json at path and
// returns the exit status: rendering measures nothing, so it does not
// fail for what the report records; it says what that is. It reads a
// regular file only, of at most maxReportBytes, and does not wait on a
// pipe.
func render(path string) int {
	b, err := results.ReadFile(path, maxReportBytes)
	if err != nil {
		fmt.Fprintln(os.Stderr, "calibrate: -render:", err)
		return 1
	}
	var rep calibrate.Report
	if err := json.Unmarshal(b, &rep); err != nil {
		fmt.Fprintf(os.Stderr, "calibrate: %s is not a calibrate -json report: %v\n", path, err)
		return 1
	}
	_ = calibrate.WriteTable(os.Stdout, rep)
	if failed, total := rep.Failures(); len(failed) > 0 {
		fmt.Fprintf(os.Stderr, "calibrate: the report records %s\n", calibrate.FailureLine(failed, total))
	}
	return 0
}

// wakeProbe prints the host's timer wake-up probe (shapedlink.ProbeWake)
// to w, as JSON or one line, and returns the exit status.
func wakeProbe(w io.Writer, asJSON bool) int {
	p, err := shapedlink.ProbeWake()
	if err != nil {
		say(err)
		return 1
	}
	if asJSON {
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		err = e.Encode(p)
	} else {
		_, err = fmt.Fprintln(w, calibrate.WakeProbeLine(p))
	}
	if err != nil {
		say(err)
		return 1
	}
	return 0
}
