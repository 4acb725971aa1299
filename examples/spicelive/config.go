package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/measure/bench"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/transport"
)

// The three readings of a cell.
const (
	// ReadingLive is a real SPICE session through the tunnel.
	ReadingLive = "live"
	// ReadingReplay is spicelike playing the reference session's shape.
	ReadingReplay = "replay"
	// ReadingSynthetic is the headline's synthetic workload.
	ReadingSynthetic = "synthetic"
)

var allReadings = []string{ReadingLive, ReadingReplay, ReadingSynthetic}

// config is what one invocation measures.
type config struct {
	// Profiles are the cells' links, loss applied, in matrix order.
	Profiles []string        `json:"profiles"`
	Arms     []transport.Arm `json:"arms"`
	Readings []string        `json:"readings"`
	Repeats  int             `json:"repeats"`
	// Duration is each run's length (for a live run, the typing), of which
	// the first Warmup is discarded.
	Duration time.Duration `json:"duration_ns"`
	Warmup   time.Duration `json:"warmup_ns"`
	// CC is the TCP congestion control of the tcp arm's connections.
	CC           string        `json:"cc"`
	KeyInterval  time.Duration `json:"key_interval_ns"`
	BusyInterval time.Duration `json:"busy_interval_ns"`
	Settle       time.Duration `json:"settle_ns"`
	// Reference is the link the replayed session is recorded over.
	Reference string `json:"reference"`
	// Control, when set, makes this a control run (see control.go).
	Control bool   `json:"control,omitempty"`
	Backend string `json:"backend,omitempty"`
	Seed    uint64 `json:"seed,omitempty"`

	Workdir        string        `json:"-"`
	SessionTimeout time.Duration `json:"-"`
}

// maxRepeats bounds -repeats.
const maxRepeats = 1000

// defaultControlProfiles are the control's two links: the same fast,
// lossless link at two round trips 100 ms apart.
const defaultControlProfiles = "10:100 110:100"

// parseFlags reads the command line. Environment variables named like the
// reference bench's (PROFILES, LOSSES, REPEATS, DURATION, WARMUP,
// WORKDIR) give the defaults, as the other matrix commands do.
func parseFlags(args []string, stderr io.Writer, getenv func(string) string) (config, bool, error) {
	fs := flag.NewFlagSet("spicelive", flag.ContinueOnError)
	fs.SetOutput(stderr)
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	profiles := fs.String("profiles", env("PROFILES", "80:10 150:2"), "link profiles, "+shapedlink.ProfileGrammar+", space-separated; the options are listed below ($PROFILES)")
	losses := fs.String("losses", env("LOSSES", "0 1"), "per-direction loss levels in percent, space-separated ($LOSSES)")
	arms := fs.String("arms", "tcp quic quic-per-channel", "arms, space-separated: tcp, quic, quic-per-channel")
	readings := fs.String("readings", strings.Join(allReadings, " "), "readings per cell and arm: live, replay, synthetic")
	repeats := fs.Int("repeats", atoi(env("REPEATS", "5")), "repeats per cell, arm and reading ($REPEATS)")
	duration := &secondsFlag{d: seconds(env("DURATION", "45"))}
	fs.Var(duration, "duration", "length of each run in seconds (or a duration such as 45s), warm-up included; a live run types for this long ($DURATION)")
	warmup := &secondsFlag{d: seconds(env("WARMUP", "5"))}
	fs.Var(warmup, "warmup", "leading part of each run left out of the figures, in seconds or as a duration ($WARMUP)")
	cc := fs.String("cc", "reno", "TCP congestion control of the tcp arm (reno matches quic-go's NewReno, as the headline does)")
	keyInterval := fs.Duration("key-interval", 500*time.Millisecond, "time between keystrokes; a key not answered before the next one is counted, not timed")
	busyInterval := fs.Duration("busy-interval", 50*time.Millisecond, "time between the busy xterm's lines")
	settle := fs.Duration("settle", 2*time.Second, "wait after the session is up before typing")
	reference := fs.String("reference", "1:100", "link over which the session replayed by the replay reading is recorded (tcp arm)")
	control := fs.Bool("control", false, "run the control instead of the matrix: a live session on the tcp arm at each of -profiles (default "+
		strconv.Quote(defaultControlProfiles)+", no loss), checked for the round trip's change and for busy draws kept out")
	workdir := fs.String("workdir", env("WORKDIR", "results/spicelive"), "results directory; a rerun resumes it ($WORKDIR)")
	backend := fs.String("backend", "", "link backend: netem, emulator, or empty to choose")
	seed := fs.Uint64("seed", 0, "emulator loss seed (0: random per run, recorded)")
	summary := fs.Bool("summary", false, "only print the summary of -workdir")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: spicelive [flags]\n\nA real SPICE session (Xspice, spicy) over each arm of the tunnel on a shaped link: "+
			"key-to-draw latency, beside a replay of the session's shape and the synthetic bench.\n\nflags:\n")
		fs.PrintDefaults()
		fmt.Fprint(stderr, shapedlink.ProfileUsage())
	}
	if err := fs.Parse(args); err != nil {
		return config{}, false, err
	}
	if fs.NArg() > 0 {
		return config{}, false, fmt.Errorf("unexpected arguments %q: every option is a flag", fs.Args())
	}
	errs := unusedFlags(fs, *summary, *control, *readings)
	if *control && !flagSet(fs, "profiles") && getenv("PROFILES") == "" {
		*profiles = defaultControlProfiles
	}
	c := config{Repeats: *repeats, Duration: duration.d, Warmup: warmup.d, CC: *cc, KeyInterval: *keyInterval,
		BusyInterval: *busyInterval, Settle: *settle, Reference: *reference, Control: *control, Backend: *backend, Seed: *seed,
		Workdir: *workdir, SessionTimeout: time.Minute}
	if c.Control {
		// The control sets these itself; what was given (or $LOSSES says)
		// is checked all the same.
		_, lerrs := parseLosses(*losses)
		_, aerrs := parseArms(*arms)
		_, rerrs := parseReadings(*readings)
		errs = append(append(append(errs, lerrs...), aerrs...), rerrs...)
		*losses, *arms, *readings = "0", "tcp", ReadingLive
	}
	errs = append(errs, c.fill(*profiles, *losses, *arms, *readings))
	return c, *summary, errors.Join(errs...)
}

// unusedFlags refuses the flags given that the mode does not use: with
// -summary every one but -workdir; with -control the lists it sets
// itself; -reference without the replay reading.
func unusedFlags(fs *flag.FlagSet, summary, control bool, readings string) []error {
	var errs []error
	fs.Visit(func(f *flag.Flag) {
		switch {
		case f.Name == "summary" || f.Name == "workdir":
		case summary:
			errs = append(errs, fmt.Errorf("-%s is not used by -summary, which prints -workdir's summary with the settings it was made with: leave it out", f.Name))
		case control && (f.Name == "arms" || f.Name == "losses" || f.Name == "readings" || f.Name == "reference"):
			errs = append(errs, fmt.Errorf("-%s is not used by -control, which runs live sessions on the tcp arm with no loss: leave it out, or drop -control to run the matrix", f.Name))
		case f.Name == "reference" && !control && !slices.Contains(strings.Fields(readings), ReadingReplay):
			errs = append(errs, errors.New("-reference is used by the replay reading only: add replay to -readings, or leave -reference out"))
		}
	})
	return errs
}

// parseLosses reads the loss levels, saying what is wrong with each one
// refused.
func parseLosses(losses string) ([]float64, []error) {
	var ls []float64
	var errs []error
	for _, s := range strings.Fields(losses) {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v >= 0 && v < 100) {
			errs = append(errs, fmt.Errorf("loss %q: want a percentage in [0, 100), e.g. -losses \"0 1\"", s))
			continue
		}
		ls = append(ls, v)
	}
	return ls, errs
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1 // refused by validation, with the reason
	}
	return n
}

// seconds reads "45" as seconds or "45s" as a duration; anything else is
// -1, which validation refuses with the reason.
func seconds(s string) time.Duration {
	var d secondsFlag
	if d.Set(s) != nil {
		return -1
	}
	return d.d
}

// secondsFlag takes seconds ("45", as the reference bench's DURATION and
// WARMUP) or a Go duration ("45s").
type secondsFlag struct{ d time.Duration }

func (f *secondsFlag) String() string { return f.d.String() }

func (f *secondsFlag) Set(s string) error {
	s = strings.TrimSpace(s)
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		if !(v >= 0) || v > 86400 {
			return fmt.Errorf("%q is not a number of seconds from 0 to a day", s)
		}
		f.d = time.Duration(v * float64(time.Second))
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("%q is neither seconds nor a duration such as 45s", s)
	}
	f.d = d
	return nil
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// fill parses the lists and checks every setting, reporting every problem.
func (c *config) fill(profiles, losses, arms, readings string) error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	ps, err := shapedlink.ParseProfiles(profiles)
	if err != nil {
		errs = append(errs, err)
	}
	ls, lerrs := parseLosses(losses)
	errs = append(errs, lerrs...)
	if len(ps) == 0 || len(ls) == 0 {
		bad("no cells: give at least one profile and one loss level")
	}
	for _, p := range ps {
		if p.HasLoss() {
			bad("profile %s carries its own loss: give loss levels with -losses", p)
			continue
		}
		for _, l := range ls {
			q := p.WithLoss(l)
			if err := q.Validate(); err != nil {
				errs = append(errs, err)
			}
			c.Profiles = append(c.Profiles, q.String())
		}
	}
	c.Arms, lerrs = parseArms(arms)
	errs = append(errs, lerrs...)
	c.Readings, lerrs = parseReadings(readings)
	errs = append(errs, lerrs...)
	if len(c.Arms) == 0 || len(c.Readings) == 0 {
		bad("no arms or no readings: give at least one of each")
	}
	errs = append(errs, c.checkNumbers()...)
	return errors.Join(errs...)
}

// parseArms reads -arms, saying what is wrong with each arm refused.
func parseArms(arms string) ([]transport.Arm, []error) {
	var out []transport.Arm
	var errs []error
	for _, s := range strings.Fields(arms) {
		a, err := transport.ParseArm(s)
		switch {
		case err != nil:
			errs = append(errs, err)
		case a == transport.ArmQUICPriority:
			errs = append(errs, fmt.Errorf("-arms: %s has no channel to prioritise when channels arrive over time; use tcp, quic, quic-per-channel", a))
		case slices.Contains(out, a):
			errs = append(errs, fmt.Errorf("-arms names %s twice", a))
		default:
			out = append(out, a)
		}
	}
	return out, errs
}

// parseReadings reads -readings, saying what is wrong with each reading
// refused.
func parseReadings(readings string) ([]string, []error) {
	var out []string
	var errs []error
	for _, r := range strings.Fields(readings) {
		switch {
		case !slices.Contains(allReadings, r):
			errs = append(errs, fmt.Errorf("-readings: %q is not a reading: want live, replay or synthetic", r))
		case slices.Contains(out, r):
			errs = append(errs, fmt.Errorf("-readings names %s twice", r))
		default:
			out = append(out, r)
		}
	}
	return out, errs
}

func (c *config) checkNumbers() []error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if c.Repeats < 1 || c.Repeats > maxRepeats {
		bad("-repeats %d: want 1 to %d (a verdict needs 2)", c.Repeats, maxRepeats)
	}
	if c.Duration <= 0 || c.Warmup < 0 || c.Warmup >= c.Duration {
		bad("-duration %v, -warmup %v: want 0 <= warm-up < duration", c.Duration, c.Warmup)
	}
	if c.KeyInterval < 50*time.Millisecond || c.KeyInterval > c.Duration/2 {
		bad("-key-interval %v: want 50ms or more, and at least two keys in -duration", c.KeyInterval)
	}
	if c.BusyInterval < 10*time.Millisecond || c.BusyInterval > 10*time.Second {
		bad("-busy-interval %v: want 10ms to 10s", c.BusyInterval)
	}
	if c.Settle < 0 || c.Settle > 10*time.Minute {
		bad("-settle %v: want 0 to 10m", c.Settle)
	}
	if c.Workdir == "" {
		bad("-workdir is empty: name a results directory")
	}
	if _, err := shapedlink.ParseProfile(c.Reference); err != nil {
		bad("-reference: %v", err)
	}
	switch shapedlink.Backend(c.Backend) {
	case shapedlink.BackendAuto, shapedlink.BackendNetem, shapedlink.BackendEmulator:
	default:
		bad("-backend %q: want netem, emulator or empty", c.Backend)
	}
	return errs
}

// job is one run of the plan.
type job struct {
	Profile string
	Arm     transport.Arm
	Reading string
	Repeat  int
}

// plan is every run, interleaved: for each cell and repeat, every arm and
// reading in turn, so that what the machine does over time falls on all
// of them alike.
func (c config) plan() []job {
	var out []job
	for _, p := range c.Profiles {
		for r := 1; r <= c.Repeats; r++ {
			for _, a := range c.Arms {
				for _, rd := range c.Readings {
					out = append(out, job{Profile: p, Arm: a, Reading: rd, Repeat: r})
				}
			}
		}
	}
	return out
}

// cell is the results cell of a profile.
func (c config) cell(profile string) (results.Cell, shapedlink.Profile, error) {
	p, err := shapedlink.ParseProfile(profile)
	if err != nil {
		return results.Cell{}, p, err
	}
	return results.Cell{Profile: p.WithLoss(0).String(), RTTms: float64(p.RoundTrip()) / float64(time.Millisecond), RateMbit: p.RateMbit,
		LossPct: p.LossPct, CC: c.CC, Sensitivity: c.CC != bench.MatchedCC}, p, nil
}

// readingDir is where a reading's runs live: one results tree per reading
// (the control's live runs have their own).
func (c config) readingDir(reading string) string {
	if c.Control {
		return filepath.Join(c.Workdir, "control")
	}
	return filepath.Join(c.Workdir, reading)
}

// referenceDir holds the recording the replay reading plays.
func (c config) referenceDir() string { return filepath.Join(c.Workdir, "reference") }

// errWorkdir says the work directory was refused.
var errWorkdir = errors.New("work directory refused")

// diffSettings names the settings in which two configurations differ.
func diffSettings(had, want config) string {
	a, _ := json.Marshal(had)
	b, _ := json.Marshal(want)
	var ma, mb map[string]json.RawMessage
	_ = json.Unmarshal(a, &ma)
	_ = json.Unmarshal(b, &mb)
	var diffs []string
	for k, v := range mb {
		if string(ma[k]) != string(v) {
			diffs = append(diffs, fmt.Sprintf("%s: %s there, %s asked", k, ma[k], v))
		}
	}
	slices.Sort(diffs)
	return strings.Join(diffs, "; ")
}
