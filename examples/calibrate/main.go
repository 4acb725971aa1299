package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
)

type config struct {
	profiles string
	backend  string
	echoes   int
	interval time.Duration
	bare     bool
	bulk     time.Duration
	lossPkts int
	sweep    string
	iperf    string
	qdisc    string
	qdiscAt  string
	json     bool
	seed     uint64
	render   string
	// jitterProbes is how many sparse one-way probes measure a profile's
	// jitter (only for profiles with jitter).
	jitterProbes int
	// timeVarying is how long the trace and schedule measurements run.
	timeVarying time.Duration
	// offload is -offload as given; checkFlags reads it into offloadMode.
	offload     string
	offloadMode shapedlink.OffloadMode
	// gsoLossSpec is -gsoloss as given, gsoLoss its profile (nil when the
	// flag is empty); gsoPace and gsoTime the sender's pace (percent of
	// the rate) and duration.
	gsoLossSpec string
	gsoLoss     *shapedlink.Profile
	gsoPace     float64
	gsoTime     time.Duration
	// quicGSOSpec is -quicgso as given, quicGSO its profile.
	quicGSOSpec string
	quicGSO     *shapedlink.Profile
}

// checkFlags reads the flags that say what to measure beyond the
// profiles into c, refusing what they cannot mean.
func checkFlags(c *config) error {
	var err error
	if c.offloadMode, err = parseOffload(c.offload); err != nil {
		return err
	}
	c.gsoLoss, c.quicGSO = nil, nil
	if p, ok, err := parseFixedProfile("-gsoloss", c.gsoLossSpec); err != nil {
		return err
	} else if ok {
		c.gsoLoss = &p
	}
	if p, ok, err := parseFixedProfile("-quicgso", c.quicGSOSpec); err != nil {
		return err
	} else if ok {
		c.quicGSO = &p
	}
	if !(c.gsoPace > 0) || c.gsoPace > 100 {
		return fmt.Errorf("-gsoloss-pace %g: the sender's pace is a percentage of the rate, above 0 and at most 100 (below 100 leaves room for the bursts of each write)", c.gsoPace)
	}
	if c.gsoTime < 500*time.Millisecond || c.gsoTime > 10*time.Minute {
		return fmt.Errorf("-gsoloss-time %v: give the sender between 500ms and 10m", c.gsoTime)
	}
	return nil
}

func main() {
	var c config
	flag.StringVar(&c.profiles, "profiles", "80:10 80:10:1 150:2 150:2:1 20:100 20:100:1 5:1000 5:1000:1",
		"profiles to calibrate, "+shapedlink.ProfileGrammar+", space-separated; the options are listed below")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: calibrate [flags]\n\nMeasures the link against its configuration.\n\nflags:\n")
		flag.PrintDefaults()
		fmt.Fprint(flag.CommandLine.Output(), shapedlink.ProfileUsage())
	}
	flag.StringVar(&c.backend, "backend", "", `shaping backend: "" (auto: netem if the kernel has it), "netem" or "emulator"`)
	flag.IntVar(&c.echoes, "echoes", 200, "idle round trips per profile, for each probe (at least 200 for the targets)")
	flag.DurationVar(&c.interval, "interval", 10*time.Millisecond, "spacing of the idle round-trip probes")
	flag.BoolVar(&c.bare, "bare", true, "measure the same ICMP probe over an unshaped veth pair before each profile (the machine's own share of the round trip)")
	flag.DurationVar(&c.bulk, "bulk", 9*time.Second, "duration of each bulk TCP flow (the first third is discarded)")
	flag.IntVar(&c.lossPkts, "losspkts", 4000, "datagrams sent for the loss measurement")
	flag.DurationVar(&c.timeVarying, "timevarying", 12*time.Second, "how long a profile with a trace or a schedule (down) is flooded or probed to measure it")
	flag.IntVar(&c.jitterProbes, "jitter-probes", 400, "one-way probes measuring a jittered profile's delay distribution, 4x the jitter apart (0 skips it)")
	flag.StringVar(&c.sweep, "sweep", "200 500 1000 2000", `rates (Mbit/s) for the highest-sustained-rate search at 5 ms RTT; "" skips it`)
	flag.StringVar(&c.iperf, "iperf3", "", `rates (Mbit/s) at 5 ms RTT for one iperf3 Cubic flow each, plus an unlimited link and the bare veth pair with its offloads on and wire-sized, e.g. "10 100 1000 2000"; needs iperf3`)
	flag.StringVar(&c.qdisc, "qdisc", "", `queue disciplines to measure under one saturating Cubic flow with a sparse flow beside it, e.g. "fifo codel fq_codel"; "" skips it`)
	flag.StringVar(&c.qdiscAt, "qdisc-profile", "80:10", "the profile the -qdisc measurements use (the discipline is added to both directions)")
	flag.BoolVar(&c.json, "json", false, "print the figures as JSON instead of a table")
	flag.Uint64Var(&c.seed, "seed", 1, "emulator loss seed (0: random); recorded in the applied lines")
	flag.StringVar(&c.render, "render", "", "print the table for a report saved with -json (measures nothing)")
	flag.StringVar(&c.offload, "offload", offloadWire, `how every link's ends handle segmentation offload: "wire" (devices pinned to wire-sized packets, as the bench runs) or "keep" (the ends keep the kernel's TSO, GSO and checksum offload, and GRO as the kernel sets it; the emulator judges each wire segment)`)
	flag.StringVar(&c.gsoLossSpec, "gsoloss", "", `a lossy profile (e.g. "5:2000:0.1") across which a sender with UDP_SEGMENT floods numbered datagrams, the receiver counting each; "" skips it`)
	flag.Float64Var(&c.gsoPace, "gsoloss-pace", 60, "the -gsoloss sender's pace, in percent of the link rate")
	flag.DurationVar(&c.gsoTime, "gsoloss-time", 8*time.Second, "how long the -gsoloss sender sends")
	flag.StringVar(&c.quicGSOSpec, "quicgso", "", `a profile (e.g. "5:1000:1") across which one quic-go bulk transfer runs for -bulk with quic-go's GSO on; "" skips it`)
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintf(os.Stderr, "calibrate: unexpected arguments %q; see -h\n", flag.Args())
		os.Exit(2)
	}
	if err := checkFlags(&c); err != nil {
		fmt.Fprintln(os.Stderr, "calibrate:", err)
		os.Exit(2)
	}
	if c.echoes < 1 || c.lossPkts < 1 || c.jitterProbes < 0 || c.bulk < 300*time.Millisecond || c.interval < time.Millisecond || c.interval > time.Second {
		fmt.Fprintln(os.Stderr, "calibrate: -echoes and -losspkts must be positive, -jitter-probes not negative, -bulk at least 300ms and -interval between 1ms and 1s")
		os.Exit(2)
	}
	if c.render != "" {
		os.Exit(render(c.render))
	}
	// Building links needs privilege: as an ordinary user this re-executes
	// the command inside a user and network namespace of its own and exits
	// with its status.
	if err := prepare(); err != nil {
		fmt.Fprintln(os.Stderr, "calibrate:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	rep, err := run(ctx, c, log)
	if err != nil {
		fmt.Fprintln(os.Stderr, "calibrate:", err)
		if ctx.Err() != nil {
			os.Exit(130) // interrupted
		}
		os.Exit(1)
	}
	if c.json {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			fmt.Fprintln(os.Stderr, "calibrate:", err)
			os.Exit(1)
		}
	} else {
		printTable(os.Stdout, rep)
	}
	if failed, total := rep.failures(); len(failed) > 0 {
		fmt.Fprintf(os.Stderr, "calibrate: %s; the figures above are what was measured\n", failureLine(failed, total))
		os.Exit(1)
	}
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
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		fmt.Fprintf(os.Stderr, "calibrate: %s is not a calibrate -json report: %v\n", path, err)
		return 1
	}
	printTable(os.Stdout, rep)
	if failed, total := rep.failures(); len(failed) > 0 {
		fmt.Fprintf(os.Stderr, "calibrate: the report records %s\n", failureLine(failed, total))
	}
	return 0
}
