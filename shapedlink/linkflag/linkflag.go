package linkflag

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/internal/cli"
	"github.com/shakenfist/quicbench/shapedlink"
)

// Flag names one of the link flags.
type Flag uint

// The flags a command can register; combine them with |.
const (
	// Backend is -backend: netem, emulator, or empty to choose.
	Backend Flag = 1 << iota
	// Mode is -mode: how the namespaces are made (root, unprivileged,
	// or empty to choose).
	Mode
	// Offload is -offload: wire or keep.
	Offload
	// Seed is -seed: the links' random seed.
	Seed
	// Profiles is -profiles: a space-separated list of profiles, read by
	// Flags.Profiles.
	Profiles
	// Profile is -profile: one profile, read by Flags.Profile. A command
	// has one of Profiles, Profile and ProfileList.
	Profile
	// ProfileList is -profile given once per profile, any number of
	// times, read by Flags.Profiles; without it, the default list is
	// read.
	ProfileList
	// Emulator is -keep-awake and -departure-window: the emulator's
	// settings, by default auto (decided by probing the host) and
	// shapedlink.DefaultDepartureWindow (200 us), left unused on a netem
	// link.
	Emulator
	// LinkOptions are the flags that set a shapedlink.Options field,
	// read by Flags.Options.
	LinkOptions = Backend | Mode | Offload | Seed | Emulator
)

// The flags' names, as a command line gives them (without the dash).
const (
	NameProfiles = "profiles"
	NameProfile  = "profile"
	NameBackend  = "backend"
	NameMode     = "mode"
	NameOffload  = "offload"
	NameSeed     = "seed"

	NameKeepAwake       = "keep-awake"
	NameDepartureWindow = "departure-window"
)

// Config says which link flags a command has, and their defaults where
// commands differ. Every flag's help text is this package's.
type Config struct {
	// Flags are the flags to register, such as LinkOptions|Profiles.
	// Options reads a backend or mode left out as automatic, and an
	// offload mode or seed left out as its default below.
	Flags Flag
	// Profiles is the default of -profiles (or -profile; for a
	// ProfileList, a space-separated list); empty leaves the user to give
	// one.
	Profiles string
	// ProfilesEnv, when not empty, names an environment variable that
	// replaces the default of -profiles (or -profile) when it is set, as
	// the reference bench's PROFILES did; the help names it.
	ProfilesEnv string
	// LookupEnv reads ProfilesEnv; nil is os.LookupEnv. A command that
	// reads its environment through a function of its own (to test it, or
	// to take an empty variable as unset) passes it here.
	LookupEnv func(name string) (string, bool)
	// Offload is -offload's default: shapedlink.OffloadWire (the zero
	// value, as the bench's matrices run) or shapedlink.OffloadKeep.
	Offload shapedlink.OffloadMode
	// Seed is -seed's default; 0 gives every link a random seed.
	Seed uint64
	// KeepAwake makes -keep-awake on by default (it is auto), for a
	// command whose published figures were taken with it.
	KeepAwake bool
}

// Flags are the link flags Register put on a flag set. They hold the text
// as given; after the flag set is parsed, Options, Profiles and Profile
// check it, so that every error names its flag the same way and all of
// them are reported together.
type Flags struct {
	fs       *flag.FlagSet
	cfg      Config
	profiles string
	backend  string
	mode     string
	offload  string
	seed     uint64
	awake    keepAwake
	window   time.Duration
	// list holds each -profile of a ProfileList, once one is given.
	list []string
}

// Help texts, one per flag.
const (
	helpBackend = "link backend: netem, emulator, or empty to choose (netem where the kernel has it)"
	helpMode    = "privilege the namespaces are built with: root (root on the host), unprivileged (root of a user namespace of its own), or empty to choose"
	helpOffload = `how every link's ends handle segmentation offload: "wire" (devices pinned to wire-sized packets, as the bench's matrices run) ` +
		`or "keep" (the ends keep the kernel's TSO, GSO and checksum offload, and GRO as the kernel sets it, so programs hand the link super-packets ` +
		`as on a host and a link carries gigabits; the emulator judges each wire segment, netem each super-packet whole); ` +
		`choose wire for wire-sized queue slots, to compare with the bench's runs and their offload evidence, or on a small machine below a few hundred Mbit/s`
	helpKeepAwake = "emulator only: on, off or auto: keep every CPU the emulator may use from halting while a link is up, with one busy loop per CPU at SCHED_IDLE, so its timers fire on a warm CPU; " +
		"the cost is every such CPU showing 100% busy while a link is up (time no other thread wants, but power and heat on a laptop); " +
		"auto decides by probing how late an idle CPU wakes for a timer (well under a second, once) and keeps them awake when that would make the emulator late; " +
		"-keep-awake alone is on, =true and =false are on and off; recorded in each run's record"
	helpWindow = "emulator only: on a busy link, the segments due within this window of a due one leave with it (at most 1ms; 0 turns it off), " +
		"so a flow's segments go out in fewer writes; a frame alone on the link keeps its due time; recorded in each run's record"
	helpSeed     = "the links' random seed (loss, jitter, duplication, reordering); 0 picks one at random for each link; the seed in force is recorded"
	helpProfiles = "link profiles, " + shapedlink.ProfileGrammar + ", space-separated; the options are listed below"
	helpProfile  = "link profile, " + shapedlink.ProfileGrammar + ", e.g. 80:10:1 or 20:50,up.rate=5; the options are listed below"
	helpList     = "a link `profile`, " + shapedlink.ProfileGrammar + "; repeat the flag for more (the default is a space-separated list); the options are listed below"
)

// Register puts the link flags c asks for on fs, and returns them to be
// read once fs is parsed. A command's usage should end with
// shapedlink.ProfileUsage(), which lists the profile options the help
// texts point to.
func Register(fs *flag.FlagSet, c Config) *Flags {
	f := &Flags{fs: fs, cfg: c, seed: c.Seed, offload: c.Offload.String(),
		awake: awakeAuto, window: shapedlink.DefaultDepartureWindow}
	if c.KeepAwake {
		f.awake = awakeOn
	}
	envNote := ""
	if c.ProfilesEnv != "" {
		envNote = " (env " + c.ProfilesEnv + ")"
	}
	if c.Flags&Profiles != 0 {
		fs.StringVar(&f.profiles, NameProfiles, f.profileDefault(c.Profiles), helpProfiles+envNote)
	}
	if c.Flags&Profile != 0 {
		fs.StringVar(&f.profiles, NameProfile, f.profileDefault(c.Profiles), helpProfile+envNote)
	}
	if c.Flags&ProfileList != 0 {
		f.profiles = f.profileDefault(c.Profiles)
		fs.Var(profileList{f}, NameProfile, helpList+envNote)
	}
	if c.Flags&Backend != 0 {
		fs.StringVar(&f.backend, NameBackend, "", helpBackend)
	}
	if c.Flags&Mode != 0 {
		fs.StringVar(&f.mode, NameMode, "", helpMode)
	}
	if c.Flags&Offload != 0 {
		fs.StringVar(&f.offload, NameOffload, c.Offload.String(), helpOffload)
	}
	if c.Flags&Seed != 0 {
		fs.Uint64Var(&f.seed, NameSeed, c.Seed, helpSeed)
	}
	if c.Flags&Emulator != 0 {
		fs.Var(&f.awake, NameKeepAwake, helpKeepAwake)
		fs.DurationVar(&f.window, NameDepartureWindow, f.window, helpWindow)
	}
	return f
}

// profileDefault is def, or the environment variable's value when the
// command names one and it is set.
func (f *Flags) profileDefault(def string) string {
	if f.cfg.ProfilesEnv != "" {
		if v, ok := f.lookupEnv(f.cfg.ProfilesEnv); ok {
			return v
		}
	}
	return def
}

// Options reads the option flags into shapedlink.Options: the backend, the
// mode, the offload mode and the seed, each checked. The error names every
// flag that was wrong and what it takes.
func (f *Flags) Options() (shapedlink.Options, error) {
	var errs []error
	o := shapedlink.Options{Seed: f.seed}
	switch b := shapedlink.Backend(f.backend); b {
	case shapedlink.BackendAuto, shapedlink.BackendNetem, shapedlink.BackendEmulator:
		o.Backend = b
	default:
		errs = append(errs, fmt.Errorf("-%s %q: want netem, emulator or empty", NameBackend, f.backend))
	}
	switch m := shapedlink.Mode(f.mode); m {
	case shapedlink.ModeAuto, shapedlink.ModeRoot, shapedlink.ModeUnprivileged:
		o.Mode = m
	default:
		errs = append(errs, fmt.Errorf("-%s %q: want root, unprivileged or empty", NameMode, f.mode))
	}
	m, err := shapedlink.ParseOffloadMode(f.offload)
	if err != nil {
		errs = append(errs, fmt.Errorf("-%s %w", NameOffload, err))
	}
	o.Offload = m
	if f.cfg.Flags&Emulator != 0 {
		errs = append(errs, f.emulatorOptions(&o)...)
	}
	if err := errors.Join(errs...); err != nil {
		return shapedlink.Options{}, err
	}
	return o, nil
}

// emulatorOptions sets o's emulator settings from -keep-awake and
// -departure-window: as given, except on a netem link, which has no
// emulator (the defaults and auto are then left unused and a setting
// given on is refused).
func (f *Flags) emulatorOptions(o *shapedlink.Options) []error {
	if f.window < 0 || f.window > shapedlink.MaxDepartureWindow {
		return []error{fmt.Errorf("-%s %v: give 0 (each segment at its due time) up to %v", NameDepartureWindow, f.window, shapedlink.MaxDepartureWindow)}
	}
	if o.Backend != shapedlink.BackendNetem {
		o.EmulatorKeepAwake, o.EmulatorKeepAwakeAuto, o.EmulatorDepartureWindow = f.awake == awakeOn, f.awake == awakeAuto, f.window
		return nil
	}
	var errs []error
	if f.Given(NameKeepAwake) && f.awake == awakeOn {
		errs = append(errs, fmt.Errorf("-%s: the netem backend has no emulator to keep awake; leave it out, or use -%s emulator", NameKeepAwake, NameBackend))
	}
	if f.Given(NameDepartureWindow) && f.window != 0 {
		errs = append(errs, fmt.Errorf("-%s: the netem backend has no departures to batch; leave it out, or use -%s emulator", NameDepartureWindow, NameBackend))
	}
	return errs
}

// Profiles reads -profiles, or the -profile of a ProfileList: at least
// one profile, each valid and each once (two texts that parse to the same
// profile, such as 80:10 and 80:10.0, are one profile given twice). The
// text of each is p.String().
func (f *Flags) Profiles() ([]shapedlink.Profile, error) {
	switch {
	case f.cfg.Flags&Profiles != 0:
		return ParseProfiles(f.profiles)
	case f.cfg.Flags&ProfileList == 0:
		return nil, errors.New("linkflag: Profiles called without -profiles or a ProfileList registered (Config.Flags lacks both)")
	case f.list == nil:
		return parseProfiles(NameProfile, strings.Fields(f.profiles))
	}
	return parseProfiles(NameProfile, f.list)
}

// Profile reads -profile: one valid profile.
func (f *Flags) Profile() (shapedlink.Profile, error) {
	if f.cfg.Flags&Profile == 0 {
		return shapedlink.Profile{}, errors.New("linkflag: Profile called without -profile registered (Config.Flags lacks Profile)")
	}
	p, err := shapedlink.ParseProfile(strings.TrimSpace(f.profiles))
	if err != nil {
		return shapedlink.Profile{}, fmt.Errorf("-%s: %w", NameProfile, err)
	}
	return p, nil
}

// ProfileText is the profile flag's text as it stands: given, from the
// environment variable, or the default; a ProfileList's profiles given
// are joined with spaces.
func (f *Flags) ProfileText() string {
	if f.list != nil {
		return strings.Join(f.list, " ")
	}
	return f.profiles
}

// SetProfileDefault replaces the profile flag's text with s unless the
// flag was given or its environment variable is set: a preset (such as a
// command's -quick) that what the user chose still overrides.
func (f *Flags) SetProfileDefault(s string) {
	if f.ProfileGiven() {
		return
	}
	f.profiles = s
}

// ProfileGiven reports whether the profile flag was chosen: given on the
// command line, or set through its environment variable.
func (f *Flags) ProfileGiven() bool {
	if f.list != nil || f.Given(NameProfiles) || f.Given(NameProfile) {
		return true
	}
	if f.cfg.ProfilesEnv == "" {
		return false
	}
	_, ok := f.lookupEnv(f.cfg.ProfilesEnv)
	return ok
}

// lookupEnv is Config.LookupEnv, or os.LookupEnv.
func (f *Flags) lookupEnv(name string) (string, bool) {
	if f.cfg.LookupEnv != nil {
		return f.cfg.LookupEnv(name)
	}
	return os.LookupEnv(name)
}

// Given reports whether the flag name was given on the command line.
func (f *Flags) Given(name string) bool { return cli.Given(f.fs, name) }

// ParseProfiles parses a space-separated list of profiles, as -profiles
// takes it: at least one, each valid and each once.
func ParseProfiles(text string) ([]shapedlink.Profile, error) {
	return parseProfiles(NameProfiles, strings.Fields(text))
}

// parseProfiles parses texts, one profile each, as the flag name gives
// them: at least one, each valid and each once.
func parseProfiles(name string, texts []string) ([]shapedlink.Profile, error) {
	if len(texts) == 0 {
		return nil, fmt.Errorf("-%s: %w", name, shapedlink.ErrEmptyProfiles)
	}
	var profiles []shapedlink.Profile
	seen := map[string]string{}
	for _, t := range texts {
		p, err := shapedlink.ParseProfile(strings.TrimSpace(t))
		if err != nil {
			return nil, fmt.Errorf("-%s: %w", name, err)
		}
		s := p.String()
		if given, ok := seen[s]; ok {
			return nil, fmt.Errorf("-%s: profile %s is given twice (as %s and %s, both read as %s): give each once",
				name, s, given, t, s)
		}
		seen[s] = t
		profiles = append(profiles, p)
	}
	return profiles, nil
}

// profileList is a ProfileList's -profile: each use adds one profile,
// the first replacing the default.
type profileList struct{ f *Flags }

func (p profileList) String() string {
	if p.f == nil {
		return ""
	}
	return p.f.ProfileText()
}

func (p profileList) Set(s string) error {
	p.f.list = append(p.f.list, s)
	return nil
}

// keepAwake is -keep-awake's value: on, off or auto.
type keepAwake string

const (
	awakeOn   keepAwake = "on"
	awakeOff  keepAwake = "off"
	awakeAuto keepAwake = "auto"
)

func (k *keepAwake) String() string {
	if k == nil {
		return ""
	}
	return string(*k)
}

// Set reads on, off or auto, and as a boolean flag took them, true and
// false (and strconv.ParseBool's other spellings) as on and off.
func (k *keepAwake) Set(s string) error {
	switch v := keepAwake(s); v {
	case awakeOn, awakeOff, awakeAuto:
		*k = v
		return nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return errors.New("want on, off or auto (true and false are on and off)")
	}
	*k = awakeOff
	if b {
		*k = awakeOn
	}
	return nil
}

// IsBoolFlag lets -keep-awake alone mean on, as when it was a boolean.
func (k *keepAwake) IsBoolFlag() bool { return true }

// TakesWord says that -keep-awake takes on, off or auto as the next
// argument too (cli.Parse joins them), though alone it means on; any
// other word is left as an argument (overlink's client command).
func (k *keepAwake) TakesWord(s string) bool {
	switch keepAwake(s) {
	case awakeOn, awakeOff, awakeAuto:
		return true
	}
	return false
}
