package benchcmd

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/internal/cli"
	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/plan"
	"github.com/shakenfist/quicbench/measure/twohost"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/linkflag"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
)

// Defaults are a command's matrix defaults; each can be overridden by its
// environment variable and then by a flag.
type Defaults struct {
	Profiles, Losses, CCs, Arms string
	Repeats                     int
	Duration, Warmup            time.Duration
	Workdir                     string
	// Axes are the further axes the command has, each as its flag with
	// its default values (SessionsFlag, CapsFlag, or a command's own
	// AxisFlag). Commands that leave an axis out do not have its flag.
	Axes []AxisFlag
	// Readings are what the full matrix found in cells a -quick run also
	// measures; after its summary, a -quick run prints one line per
	// reading saying what it found beside it (printFindings).
	Readings []Reading
}

// matrixFlags are the options every matrix command shares.
type matrixFlags struct {
	fs                                 *flag.FlagSet
	link                               *linkflag.Flags
	losses, ccs, arms                  string
	repeats                            int
	duration, warmup                   durationFlag
	workdir                            string
	perChannel, quick, qlog, noSummary bool
	quickDefaults                      Defaults
	axes                               []AxisFlag
	axisTexts                          []string
	repeatsEnvErr                      error
	shard                              string
	// twoHost are -serve, -remote, -secret-file and -idle-timeout.
	twoHost twoHostFlags
	// remote is the two-host daemon's client Matrix made for -remote.
	remote *twohost.Client
}

// newFlags registers the shared flags on fs. Each default comes from d,
// overridden by its environment variable (PROFILES, LOSSES, CCS, REPEATS,
// DURATION, WARMUP, WORKDIR). quick is the -quick preset. The link flags
// (-profiles, -backend, -mode, -offload, -seed, -keep-awake,
// -departure-window) are package linkflag's. -per-channel is registered
// only where d.Arms lacks quic-per-channel.
func newFlags(fs *flag.FlagSet, d, quick Defaults) *matrixFlags {
	f := &matrixFlags{fs: fs, quickDefaults: quick, axes: d.Axes}
	f.link = linkflag.Register(fs, linkflag.Config{Flags: linkflag.LinkOptions | linkflag.Profiles, Profiles: d.Profiles, ProfilesEnv: "PROFILES"})
	fs.StringVar(&f.losses, "losses", env("LOSSES", d.Losses), "per-direction loss levels in percent, space-separated, for every profile without a loss of its own (a profile with loss options, such as 80:10,loss=ge:0.3367/33.33, runs once with its own) (env LOSSES)")
	fs.StringVar(&f.ccs, "ccs", env("CCS", d.CCs), "TCP congestion controls for the tcp arm: reno (the headline), cubic, bbr, or quicreno, a BPF controller that does what quic-go's does (registered for the run; needs root on the host) (env CCS)")
	fs.StringVar(&f.arms, "arms", d.Arms, "arms, space-separated: "+armNames()+", tcp-<controller> (tcp with its own congestion control, e.g. tcp-bbr or tcp-quicreno) "+
		"or quinn-<controller> (quinn on its own controller whatever the cell's: quinn-cubic, quinn-newreno, quinn-bbr)")
	if !slices.Contains(strings.Fields(d.Arms), string(transport.ArmQUICPerChannel)) {
		// Where the arms run it already, the flag would mean nothing.
		fs.BoolVar(&f.perChannel, "per-channel", false, "also run the quic-per-channel arm (one QUIC connection per channel)")
	}
	f.repeats = d.Repeats
	if v, ok := os.LookupEnv("REPEATS"); ok {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err == nil {
			f.repeats = n
		} else {
			f.repeatsEnvErr = fmt.Errorf("REPEATS=%q is not a whole number", v)
		}
	}
	fs.IntVar(&f.repeats, "repeats", f.repeats, "repeats per cell and arm (env REPEATS)")
	f.duration = durationFlag{d: d.Duration}
	f.duration.setEnv("DURATION")
	fs.Var(&f.duration, "duration", "length of each run, warm-up included: seconds or a Go duration (env DURATION)")
	f.warmup = durationFlag{d: d.Warmup}
	f.warmup.setEnv("WARMUP")
	fs.Var(&f.warmup, "warmup", "leading part of each run left out of the figures (env WARMUP)")
	fs.StringVar(&f.workdir, "workdir", env("WORKDIR", d.Workdir), "results directory; a rerun resumes it (env WORKDIR)")
	fs.BoolVar(&f.qlog, "qlog", false, "write a qlog file per QUIC connection into each run directory")
	fs.BoolVar(&f.quick, "quick", false, fmt.Sprintf("quick preset: %s at losses %s, %d repeats of %v into %s; flags and variables given with it override its values", quick.Profiles, quick.Losses, quick.Repeats, quick.Duration, quick.Workdir))
	fs.BoolVar(&f.noSummary, "no-summary", false, "do not print the summary at the end")
	fs.StringVar(&f.shard, "shard", "", shardFlagHelp)
	f.twoHost.register(fs)
	f.axisTexts = make([]string, len(d.Axes))
	for i, a := range d.Axes {
		a.register(fs, &f.axisTexts[i])
	}
	return f
}

// env is the environment variable name's value when it is set, else def.
func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return def
}

type durationFlag struct {
	d      time.Duration
	envErr error
}

func (d *durationFlag) String() string { return d.d.String() }
func (d *durationFlag) Set(s string) error {
	v, err := parseSeconds(s)
	if err != nil {
		return err
	}
	d.d = v
	return nil
}
func (d *durationFlag) setEnv(name string) {
	if v, ok := os.LookupEnv(name); ok {
		if err := d.Set(v); err != nil {
			d.envErr = fmt.Errorf("%s=%q: %w", name, v, err)
		}
	}
}

// Seconds is a flag.Value holding a duration given as seconds ("45", as
// the reference bench's DURATION and WARMUP) or a Go duration ("45s"),
// from 0 to MaxDuration.
type Seconds struct{ D time.Duration }

func (f *Seconds) String() string { return f.D.String() }

// Set parses s as parseSeconds does.
func (f *Seconds) Set(s string) error {
	d, err := parseSeconds(s)
	if err != nil {
		return err
	}
	f.D = d
	return nil
}

// ParseSeconds is Seconds' parse: a duration, or -1 when s is neither, so
// that a default read from the environment is refused later with the
// reason.
func ParseSeconds(s string) time.Duration {
	d, err := parseSeconds(s)
	if err != nil {
		return -1
	}
	return d
}

// parseSeconds accepts "45" (seconds, as DURATION and WARMUP were) or a Go
// duration ("45s", "1m30s"), positive and at most MaxDuration.
func parseSeconds(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var d time.Duration
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(f) || f < 0 || f > plan.MaxDuration.Seconds() {
			return 0, fmt.Errorf("%q is not a number of seconds from 0 to %v", s, plan.MaxDuration)
		}
		d = time.Duration(f * float64(time.Second))
	} else if d, err = time.ParseDuration(s); err != nil {
		return 0, fmt.Errorf("%q is neither seconds nor a duration such as 45s", s)
	}
	if d < 0 || d > plan.MaxDuration {
		return 0, fmt.Errorf("%q is outside 0 to %v", s, plan.MaxDuration)
	}
	return d, nil
}

// parseFloats parses a space-separated list of finite numbers, naming what
// they are (what) and giving an example in errors; a repeated value (after
// parsing, so 0 and 0.0 are one) is refused.
func parseFloats(s, what, example string) ([]float64, error) {
	var out []float64
	seen := map[float64]string{}
	for _, f := range strings.Fields(s) {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%s %q is not a finite number (want values such as %q)", what, f, example)
		}
		if prev, ok := seen[v]; ok {
			return nil, fmt.Errorf("%s %q repeats %q: give each value once", what, f, prev)
		}
		seen[v] = f
		out = append(out, v)
	}
	return out, nil
}

// uniqueFields splits s into fields and refuses a repeated one.
func uniqueFields(s, what string) ([]string, error) {
	out := strings.Fields(s)
	for i, f := range out {
		if slices.Contains(out[:i], f) {
			return nil, fmt.Errorf("%s %q is given twice: give each once", what, f)
		}
	}
	return out, nil
}

// matrix builds the matrix the flags describe. With -quick, the preset
// replaces the defaults; flags given on the command line and the
// variables set in the environment still override it.
func (f *matrixFlags) matrix() (*plan.Matrix, error) {
	if err := f.envError(); err != nil {
		return nil, err
	}
	if f.quick {
		f.applyQuick()
	}
	var profiles []shapedlink.Profile
	var losses []float64
	var err error
	if f.twoHost.remote != "" {
		// The path is used as found: nothing to parse, and what would
		// shape a link is refused.
		err = f.twoHost.refuseLinkFlags(f.explicit)
	} else {
		profiles, losses, err = f.linkCells()
	}
	if err != nil {
		return nil, err
	}
	link, err := f.link.Options()
	if err != nil {
		return nil, err
	}
	if f.twoHost.remote != "" {
		// No link is built, so no emulator to set.
		link.EmulatorKeepAwake, link.EmulatorKeepAwakeAuto, link.EmulatorDepartureWindow = false, false, 0
	}
	arms, err := f.armList()
	if err != nil {
		return nil, err
	}
	ccs, err := uniqueFields(f.ccs, "congestion control")
	if err != nil {
		return nil, err
	}
	w := spicelike.Defaults()
	w.Duration, w.Warmup = f.duration.d, f.warmup.d
	shard, err := f.shardSetting()
	if err != nil {
		return nil, err
	}
	m := &plan.Matrix{
		Shard:    shard,
		Profiles: profiles, Losses: losses, CCs: ccs,
		Arms: arms, Repeats: f.repeats, Workload: w, Workdir: f.workdir, Qlog: f.qlog,
		Link: link,
	}
	for i, a := range f.axes {
		if err := a.Set(m, f.axisTexts[i]); err != nil {
			return nil, err
		}
	}
	if f.remote, err = f.twoHost.remoteFor(f.fs); err != nil {
		return nil, err
	}
	var errs []error
	if f.remote != nil {
		m.Remote = f.remote.Addr
		errs = f.remote.Validate()
	}
	return m, errors.Join(append(errs, m.Validate())...)
}

// explicit reports whether the setting was chosen: flagName given on the
// command line, or env set in the environment.
func (f *matrixFlags) explicit(flagName, env string) bool {
	if cli.Given(f.fs, flagName) {
		return true
	}
	_, ok := os.LookupEnv(env)
	return env != "" && ok
}

// envError is the error of a variable in the environment that could not
// be read (REPEATS, DURATION, WARMUP), unless its flag overrides it.
func (f *matrixFlags) envError() error {
	if f.repeatsEnvErr != nil && !cli.Given(f.fs, "repeats") {
		return f.repeatsEnvErr
	}
	for name, d := range map[string]*durationFlag{"duration": &f.duration, "warmup": &f.warmup} {
		if d.envErr != nil && !cli.Given(f.fs, name) {
			return d.envErr
		}
	}
	return nil
}

// applyQuick puts the -quick preset in place of every setting not chosen
// explicitly.
func (f *matrixFlags) applyQuick() {
	q := f.quickDefaults
	f.link.SetProfileDefault(q.Profiles)
	if !f.explicit("losses", "LOSSES") {
		f.losses = q.Losses
	}
	if !f.explicit("repeats", "REPEATS") {
		f.repeats = q.Repeats
	}
	if !f.explicit("duration", "DURATION") {
		f.duration.d = q.Duration
	}
	if !f.explicit("warmup", "WARMUP") {
		f.warmup.d = q.Warmup
	}
	if !f.explicit("workdir", "WORKDIR") {
		f.workdir = q.Workdir
	}
}

// armList is the -arms list, refusing an arm given twice, with
// quic-per-channel added for -per-channel if the list lacks it. The names
// are checked with the matrix (Matrix.Validate).
func (f *matrixFlags) armList() ([]measure.Arm, error) {
	names, err := uniqueFields(f.arms, "arm")
	if err != nil {
		return nil, err
	}
	var arms []measure.Arm
	for _, n := range names {
		arms = append(arms, measure.Arm(n))
	}
	if pc := measure.Arm(transport.ArmQUICPerChannel); f.perChannel && !slices.Contains(arms, pc) {
		arms = append(arms, pc)
	}
	return arms, nil
}

// linkCells parses the profiles (linkflag's -profiles: each valid and
// each once) and the loss levels of a matrix over an emulated link.
func (f *matrixFlags) linkCells() ([]shapedlink.Profile, []float64, error) {
	profiles, err := f.link.Profiles()
	if err != nil {
		return nil, nil, err
	}
	losses, err := parseFloats(f.losses, "loss", "0 1 2")
	if err != nil {
		return nil, nil, err
	}
	return profiles, losses, nil
}

// armNames lists every registered arm for the flag's help.
func armNames() string { return strings.Join(measure.ArmNames(), " ") }

// String describes the matrix d asks for and how many runs it makes.
func (d Defaults) String() string {
	n := len(strings.Fields(d.Profiles)) * len(strings.Fields(d.Losses)) * len(strings.Fields(d.CCs)) *
		len(strings.Fields(d.Arms)) * d.Repeats
	extra := ""
	for _, a := range d.Axes {
		n *= max(1, len(strings.Fields(a.Default)))
		extra += fmt.Sprintf(", %s %q", a.Name, a.Default)
	}
	return fmt.Sprintf("profiles %q, losses %q, ccs %q, arms %q%s, %d repeats of %v (%v warm-up): %d runs into %s",
		d.Profiles, d.Losses, d.CCs, d.Arms, extra, d.Repeats, d.Duration, d.Warmup, n, d.Workdir)
}

// shardFlagHelp is -shard's help text; it names the variables it reads.
const shardFlagHelp = "run only shard i of n of the matrix (i counts from 0: 0/4 to 3/4), one (cell, repeat) with all its arms at a time, " +
	"so that n identical machines share it; summarise merges their work directories (env SHARD; " +
	"or JOB_COMPLETION_INDEX, as a Kubernetes Indexed Job sets it, with the count in SHARDS)"

// shardSetting is the shard the flags and the environment choose.
func (f *matrixFlags) shardSetting() (plan.Shard, error) {
	return plan.ResolveShard(f.shard, cli.Given(f.fs, "shard"), os.LookupEnv)
}
