package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/examples/internal/gorun"
	"github.com/shakenfist/quicbench/internal/cli"
	"github.com/shakenfist/quicbench/measure/simcheck"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/linkflag"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

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
	probe     simcheck.Probes
	headline  bool
	emulator  bool
	hlProfile string
	repeats   int
	duration  time.Duration
	warmup    time.Duration
}

// linkFlags defines the links' flags on fs: package linkflag's -profile
// (repeatable, one profile each) and -seed (1 by default, the same for
// every carrier, so that the same datagrams are lost), and
// -headline-profile.
func linkFlags(fs *flag.FlagSet, f *flags) *linkflag.Flags {
	fs.StringVar(&f.hlProfile, "headline-profile", "80:10:1", "the headline's profile")
	return linkflag.Register(fs, linkflag.Config{Flags: linkflag.ProfileList | linkflag.Seed,
		Profiles: strings.Join(simcheck.DefaultProfiles(), " "), Seed: 1})
}

// readLink reads the link flags into f.
func (f *flags) readLink(link *linkflag.Flags) error {
	ps, err := link.Profiles()
	for _, p := range ps {
		f.profiles = append(f.profiles, p.String())
	}
	o, oerr := link.Options()
	f.seed = o.Seed
	return errors.Join(err, oerr)
}

func parseFlags(args []string) (flags, error) {
	var f flags
	fs := flag.NewFlagSet("simcheck", flag.ExitOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: go run ./examples/simcheck [flags]\n\n%s\nflags:\n", usage)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), shapedlink.ProfileUsage())
	}
	link := linkFlags(fs, &f)
	d := simcheck.DefaultProbes()
	fs.DurationVar(&f.probe.Bulk, "bulk", d.Bulk, "the bulk transfer's length")
	fs.DurationVar(&f.probe.BulkWarmup, "bulk-warmup", d.BulkWarmup, "the bulk transfer's leading part left out of the goodput")
	fs.IntVar(&f.probe.PacketSize, "packet", d.PacketSize, fmt.Sprintf("QUIC packet size, %d to %d (above %d quic-go v0.65 cannot run in virtual time)",
		transport.MinPacketSize, transport.MaxPacketSize, transport.MaxVirtualPacketSize))
	fs.IntVar(&f.probe.Echoes, "echoes", d.Echoes, "idle echoes")
	fs.DurationVar(&f.probe.EchoGap, "echo-gap", d.EchoGap, "the pause after each echo")
	fs.IntVar(&f.probe.Datagrams, "datagrams", d.Datagrams, "numbered datagrams for the loss pattern")
	fs.DurationVar(&f.probe.Spacing, "spacing", d.Spacing, "between numbered datagrams (sparse, so the limit never binds)")
	fs.BoolVar(&f.emulator, "emulator", true, "run the emulator column (Linux, root or unprivileged user namespaces)")
	fs.BoolVar(&f.headline, "headline", false, "run the headline's QUIC arms in virtual time instead of the agreement")
	fs.IntVar(&f.repeats, "repeats", 5, "the headline's repeats per arm")
	fs.DurationVar(&f.duration, "duration", 45*time.Second, "the headline's run length, warm-up included")
	fs.DurationVar(&f.warmup, "warmup", 5*time.Second, "the headline's warm-up")
	if err := cli.Parse(fs, args); err != nil {
		return f, err
	}
	errs := append(f.check(), f.readLink(link))
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
	agreementFlags = map[string]bool{linkflag.NameProfile: true, "bulk": true, "bulk-warmup": true, "echoes": true, "echo-gap": true,
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
	if p.PacketSize < transport.MinPacketSize || p.PacketSize > transport.MaxPacketSize {
		bad("-packet %d: give %d to %d", p.PacketSize, transport.MinPacketSize, transport.MaxPacketSize)
	}
	if p.Bulk < time.Second || p.Bulk > maxBulk || p.BulkWarmup < 0 || p.BulkWarmup >= p.Bulk {
		bad("-bulk %v, -bulk-warmup %v: give a transfer of 1s to %v, longer than its warm-up (which may be 0)", p.Bulk, p.BulkWarmup, maxBulk)
	}
	if p.Echoes < 1 || p.Echoes > maxEchoes || p.EchoGap < 0 || p.EchoGap > 10*time.Second ||
		time.Duration(p.Echoes)*p.EchoGap > maxProbe {
		bad("-echoes %d, -echo-gap %v: give 1 to %d echoes, a gap of 0 to 10s, and no more than %v of gaps", p.Echoes, p.EchoGap, maxEchoes, maxProbe)
	}
	if p.Datagrams < 1 || p.Datagrams > maxDatagrams || p.Spacing <= 0 || p.Spacing > time.Second ||
		time.Duration(p.Datagrams)*p.Spacing > maxProbe {
		bad("-datagrams %d, -spacing %v: give 1 to %d datagrams, a spacing above 0 up to 1s, and no more than %v of them",
			p.Datagrams, p.Spacing, maxDatagrams, maxProbe)
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

// agreement is the agreement's configuration; unavailable says why the
// emulator cannot run here, or is nil.
func (f flags) agreement(unavailable error) simcheck.Config {
	return simcheck.Config{Profiles: f.profiles, Seed: f.seed, Probes: f.probe, Emulator: f.emulator, EmulatorUnavailable: unavailable, Progress: os.Stderr}
}

// headlineConfig is the -headline run's configuration.
func (f flags) headlineConfig() (simcheck.HeadlineConfig, error) {
	p, err := shapedlink.ParseProfile(f.hlProfile)
	if err != nil {
		return simcheck.HeadlineConfig{}, fmt.Errorf("-headline-profile: %w", err)
	}
	w := spicelike.Defaults()
	w.Duration, w.Warmup = f.duration, f.warmup
	if err := w.Validate(); err != nil {
		return simcheck.HeadlineConfig{}, fmt.Errorf("-duration %v, -warmup %v: %w", f.duration, f.warmup, err)
	}
	return simcheck.HeadlineConfig{Profile: p, Repeats: f.repeats, Workload: w, PacketSize: f.probe.PacketSize, Seed: f.seed}, nil
}

func main() {
	gorun.Follow()
	// An unprivileged user gets the namespaces the emulator needs by
	// re-executing this program in a user namespace; elsewhere the
	// emulator column says why it did not run.
	privileged := shapedlink.Reexec()
	f, err := parseFlags(os.Args[1:])
	if err != nil {
		os.Exit(cli.Exit(os.Stderr, "simcheck", err))
	}
	ctx := context.Background()
	inBubbles(func(t *testing.T) {
		var err error
		if f.headline {
			c, _ := f.headlineConfig() // checked by parseFlags
			var h simcheck.Headline
			h, err = simcheck.RunHeadline(ctx, t, c)
			h.Write(os.Stdout)
			if err == nil {
				err = h.Verdict()
			}
		} else {
			var tab simcheck.Table
			if tab, err = simcheck.Run(ctx, t, f.agreement(privileged)); err == nil {
				tab.Write(os.Stdout)
				err = tab.Verdict()
			}
		}
		if err != nil {
			// The process exits 1 ("FAIL").
			fmt.Fprintln(os.Stderr, "simcheck:", err)
			t.Fail()
		}
	})
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
