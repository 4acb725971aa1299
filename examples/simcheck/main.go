package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
)

// defaultProfiles are the agreement's profiles: the headline's, its lossy
// cell, the slow one, burst loss (1% in bursts of 3) and jitter.
var defaultProfiles = []string{"80:10", "80:10:1", "150:2:1", "80:10,loss=ge:0.3367/33.33", "80:10,jitter=5/normal"}

// usage is what -h says before the flags.
const usage = `Checks the in-process link (shapedlink's BackendInProcess) against the
emulator. For each -profile, on the emulator, on the in-process link in real
time and in virtual time (a testing/synctest bubble), each over fresh links
with the same -seed: a quic-go bulk transfer's goodput, an idle UDP echo's
round trips and which of a numbered stream's datagrams were lost; then a table
with each in-process row's difference from the emulator's and whether it meets
the targets (goodput within 3%, p50 round trip within 0.2 ms, the same
datagrams lost). With -headline, instead: the headline's QUIC arms (quic
against quic-per-channel, the SPICE-like workload) in virtual time, each arm's
cell, the verdict and the wall time taken.
`

// flags are the command's settings.
type flags struct {
	profiles  []string
	seed      uint64
	probe     probeConfig
	headline  bool
	emulator  bool
	hlProfile string
	repeats   int
	duration  time.Duration
	warmup    time.Duration
}

func parseFlags(args []string) (flags, error) {
	var f flags
	fs := flag.NewFlagSet("simcheck", flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: go run ./examples/simcheck [flags]\n\n%s\nflags:\n", usage)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), shapedlink.ProfileUsage())
	}
	fs.Func("profile", "a profile to check (repeatable; default "+strings.Join(defaultProfiles, " ")+")", func(s string) error {
		if _, err := shapedlink.ParseProfile(s); err != nil {
			return err
		}
		f.profiles = append(f.profiles, s)
		return nil
	})
	fs.Uint64Var(&f.seed, "seed", 1, "the links' seed (the same for every carrier, so the same datagrams are lost)")
	fs.DurationVar(&f.probe.bulk, "bulk", 20*time.Second, "the bulk transfer's length")
	fs.DurationVar(&f.probe.bulkWarmup, "bulk-warmup", 3*time.Second, "the bulk transfer's leading part left out of the goodput")
	fs.IntVar(&f.probe.packetSize, "packet", 1280, "QUIC packet size, 1200 to 1452 (above 1280 quic-go v0.65 cannot run in virtual time)")
	fs.IntVar(&f.probe.echoes, "echoes", 500, "idle echoes")
	fs.DurationVar(&f.probe.echoGap, "echo-gap", 20*time.Millisecond, "the pause after each echo")
	fs.IntVar(&f.probe.datagrams, "datagrams", 2500, "numbered datagrams for the loss pattern")
	fs.DurationVar(&f.probe.spacing, "spacing", 4*time.Millisecond, "between numbered datagrams (sparse, so the limit never binds)")
	fs.BoolVar(&f.emulator, "emulator", true, "run the emulator column (Linux, root or unprivileged user namespaces)")
	fs.BoolVar(&f.headline, "headline", false, "run the headline's QUIC arms in virtual time instead of the agreement")
	fs.StringVar(&f.hlProfile, "headline-profile", "80:10:1", "the headline's profile")
	fs.IntVar(&f.repeats, "repeats", 5, "the headline's repeats per arm")
	fs.DurationVar(&f.duration, "duration", 45*time.Second, "the headline's run length, warm-up included")
	fs.DurationVar(&f.warmup, "warmup", 5*time.Second, "the headline's warm-up")
	if err := fs.Parse(args); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("unexpected arguments %q; see -h", fs.Args())
	}
	if len(f.profiles) == 0 {
		f.profiles = defaultProfiles
	}
	errs := f.check()
	fs.Visit(func(fl *flag.Flag) {
		switch {
		case f.headline && agreementFlags[fl.Name]:
			errs = append(errs, fmt.Errorf("-%s is not used by -headline: leave it out, or drop -headline to run the agreement", fl.Name))
		case !f.headline && headlineFlags[fl.Name]:
			errs = append(errs, fmt.Errorf("-%s is used by -headline only: add -headline, or leave it out", fl.Name))
		}
	})
	return f, errors.Join(errs...)
}

// The flags only the agreement uses, and those only -headline uses.
var (
	agreementFlags = map[string]bool{"profile": true, "bulk": true, "bulk-warmup": true, "echoes": true, "echo-gap": true,
		"datagrams": true, "spacing": true, "emulator": true}
	headlineFlags = map[string]bool{"headline-profile": true, "repeats": true, "duration": true, "warmup": true}
)

// Bounds of the numeric flags: a probe or a headline run longer than
// these is a mistake, not a measurement.
const (
	maxBulk      = 10 * time.Minute
	maxProbe     = time.Hour // echoes × echo gap, datagrams × spacing
	maxEchoes    = 100_000
	maxDatagrams = 1_000_000
	maxRepeats   = 100
	maxDuration  = 10 * time.Minute
)

// check reports every setting out of its range, whatever the mode.
func (f flags) check() []error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	p := f.probe
	if p.packetSize < 1200 || p.packetSize > 1452 {
		bad("-packet %d: give 1200 to 1452", p.packetSize)
	}
	if p.bulk < time.Second || p.bulk > maxBulk || p.bulkWarmup < 0 || p.bulkWarmup >= p.bulk {
		bad("-bulk %v, -bulk-warmup %v: give a transfer of 1s to %v, longer than its warm-up (which may be 0)", p.bulk, p.bulkWarmup, maxBulk)
	}
	if p.echoes < 1 || p.echoes > maxEchoes || p.echoGap < 0 || p.echoGap > 10*time.Second ||
		time.Duration(p.echoes)*p.echoGap > maxProbe {
		bad("-echoes %d, -echo-gap %v: give 1 to %d echoes, a gap of 0 to 10s, and no more than %v of gaps", p.echoes, p.echoGap, maxEchoes, maxProbe)
	}
	if p.datagrams < 1 || p.datagrams > maxDatagrams || p.spacing <= 0 || p.spacing > time.Second ||
		time.Duration(p.datagrams)*p.spacing > maxProbe {
		bad("-datagrams %d, -spacing %v: give 1 to %d datagrams, a spacing above 0 up to 1s, and no more than %v of them",
			p.datagrams, p.spacing, maxDatagrams, maxProbe)
	}
	if f.repeats < 2 || f.repeats > maxRepeats {
		bad("-repeats %d: give 2 to %d", f.repeats, maxRepeats)
	}
	if f.duration > maxDuration {
		bad("-duration %v: give at most %v", f.duration, maxDuration)
	} else if _, err := f.headlineConfig(); err != nil {
		errs = append(errs, err)
	}
	return errs
}

func main() {
	// An unprivileged user gets the namespaces the emulator needs by
	// re-executing this program in a user namespace; elsewhere the
	// emulator column says why it did not run.
	privileged := shapedlink.Reexec()
	f, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "simcheck:", err)
		os.Exit(2)
	}
	inBubbles(func(t *testing.T) {
		var err error
		if f.headline {
			c, _ := f.headlineConfig() // checked by parseFlags
			err = headline(t, os.Stdout, c)
		} else {
			err = agreement(t, os.Stdout, f, privileged)
		}
		if err != nil {
			// The process exits 1 ("FAIL").
			fmt.Fprintln(os.Stderr, "simcheck:", err)
			t.Fail()
		}
	})
}

// agreement runs the probes of every profile on every carrier (the
// emulator's unless unavailable says why it cannot run), writes the
// table, and says how many rows did not run or missed the targets.
func agreement(t *testing.T, w io.Writer, f flags, unavailable error) error {
	var rows []row
	for _, p := range f.profiles {
		if f.emulator {
			rows = append(rows, realTime(p, onEmulator, shapedlink.BackendEmulator, f, unavailable))
		}
		rows = append(rows, realTime(p, onRealTime, shapedlink.BackendInProcess, f, nil))
		rows = append(rows, row{profile: p, carrier: onVirtual}) // filled in below
	}
	for i := range rows {
		if rows[i].carrier == onVirtual {
			synctest.Test(t, func(t *testing.T) { rows[i] = probeAll(rows[i].profile, onVirtual, shapedlink.BackendInProcess, f) })
		}
	}
	writeTable(w, rows)
	return verdict(rows)
}

// realTime runs the probes over profile on backend in real time, unless
// unavailable says why it cannot.
func realTime(profile, carrier string, backend shapedlink.Backend, f flags, unavailable error) row {
	if unavailable != nil {
		return row{profile: profile, carrier: carrier, err: unavailable}
	}
	fmt.Fprintf(os.Stderr, "simcheck: %s on the %s\n", profile, carrier)
	return probeAll(profile, carrier, backend, f)
}

// probeAll runs each probe over a fresh link of profile on backend, in
// whatever time the caller runs in.
func probeAll(profile, carrier string, backend shapedlink.Backend, f flags) row {
	r := row{profile: profile, carrier: carrier}
	p, err := shapedlink.ParseProfile(profile)
	if err != nil {
		r.err = err
		return r
	}
	ctx := context.Background()
	fresh := func(probe func(*shapedlink.Link) error) {
		if r.err != nil {
			return
		}
		link, err := shapedlink.New(ctx, p, shapedlink.Options{Backend: backend, Seed: f.seed})
		if err != nil {
			r.err = err
			return
		}
		defer link.Close()
		r.err = probe(link)
	}
	fresh(func(l *shapedlink.Link) (err error) { r.goodput, err = bulk(ctx, l, f.probe); return err })
	fresh(func(l *shapedlink.Link) (err error) { r.echo, err = echo(ctx, l, f.probe); return err })
	fresh(func(l *shapedlink.Link) (err error) { r.lost, err = lossPattern(ctx, l, f.probe); return err })
	return r
}

// headlineConfig is the -headline run's configuration.
func (f flags) headlineConfig() (headlineConfig, error) {
	p, err := shapedlink.ParseProfile(f.hlProfile)
	if err != nil {
		return headlineConfig{}, fmt.Errorf("-headline-profile: %w", err)
	}
	w := spicelike.Defaults()
	w.Duration, w.Warmup = f.duration, f.warmup
	if err := w.Validate(); err != nil {
		return headlineConfig{}, fmt.Errorf("-duration %v, -warmup %v: %w", f.duration, f.warmup, err)
	}
	return headlineConfig{profile: p, repeats: f.repeats, workload: w, packetSize: f.probe.packetSize, seed: f.seed}, nil
}

// inBubbles runs fn as the one test of a test binary's main, which is
// how a command gets the *testing.T that testing/synctest's bubbles
// need; it exits the process when fn returns ("PASS", or "FAIL" if fn
// failed t).
func inBubbles(fn func(t *testing.T)) {
	// The testing package's flags, parsed from nothing: the command's
	// own are not its.
	testing.Init()
	_ = flag.CommandLine.Parse(nil)
	testing.Main(func(pat, str string) (bool, error) { return regexp.MatchString(pat, str) },
		[]testing.InternalTest{{Name: "simcheck", F: fn}}, nil, nil)
}
