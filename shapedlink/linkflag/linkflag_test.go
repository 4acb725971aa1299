package linkflag

import (
	"bytes"
	"errors"
	"flag"
	"github.com/shakenfist/quicbench/internal/cli"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
)

func parse(t *testing.T, c Config, args ...string) (*Flags, *flag.FlagSet) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := Register(fs, c)
	if err := cli.Parse(fs, args); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return f, fs
}

// TestRegistersOnlyWhatIsAsked: each Flag bit registers its flag and no
// other, and the profile flags only when they have a default.
func TestRegistersOnlyWhatIsAsked(t *testing.T) {
	for _, c := range []struct {
		cfg  Config
		want []string
	}{
		{Config{}, nil},
		{Config{Flags: LinkOptions}, []string{"backend", "departure-window", "keep-awake", "mode", "offload", "seed"}},
		{Config{Flags: Emulator}, []string{"departure-window", "keep-awake"}},
		{Config{Flags: Backend | Seed | Profile, Profiles: "80:10"}, []string{"backend", "profile", "seed"}},
		{Config{Flags: Offload | Profiles, Profiles: "80:10"}, []string{"offload", "profiles"}},
		{Config{Flags: Profiles}, []string{"profiles"}},
		{Config{Flags: Mode}, []string{"mode"}},
		{Config{Flags: ProfileList | Seed}, []string{"profile", "seed"}},
	} {
		_, fs := parse(t, c.cfg)
		var got []string
		fs.VisitAll(func(f *flag.Flag) { got = append(got, f.Name) })
		if strings.Join(got, " ") != strings.Join(c.want, " ") {
			t.Errorf("%+v registered %v, want %v", c.cfg, got, c.want)
		}
	}
}

// TestDefaults: with nothing given, Options is automatic, wire and a
// random seed, unless the Config says otherwise; a flag left out takes the
// Config's default too.
func TestDefaults(t *testing.T) {
	f, _ := parse(t, Config{Flags: LinkOptions})
	o, err := f.Options()
	if err != nil || o.Backend != shapedlink.BackendAuto || o.Mode != shapedlink.ModeAuto || o.Offload != shapedlink.OffloadWire || o.Seed != 0 {
		t.Errorf("defaults: %+v, %v", o, err)
	}
	f, _ = parse(t, Config{Flags: LinkOptions, Offload: shapedlink.OffloadKeep, Seed: 1})
	if o, err = f.Options(); err != nil || o.Offload != shapedlink.OffloadKeep || o.Seed != 1 {
		t.Errorf("keep and seed 1 as defaults: %+v, %v", o, err)
	}
	f, _ = parse(t, Config{Offload: shapedlink.OffloadKeep, Seed: 3})
	if o, err = f.Options(); err != nil || o.Offload != shapedlink.OffloadKeep || o.Seed != 3 {
		t.Errorf("no flags registered, keep and seed 3 in the Config: %+v, %v", o, err)
	}
	f, _ = parse(t, Config{Flags: LinkOptions}, "-backend", "netem", "-mode", "unprivileged", "-offload", "keep", "-seed", "42")
	if o, err = f.Options(); err != nil || o.Backend != shapedlink.BackendNetem || o.Mode != shapedlink.ModeUnprivileged ||
		o.Offload != shapedlink.OffloadKeep || o.Seed != 42 {
		t.Errorf("every flag given: %+v, %v", o, err)
	}
}

// TestEmulatorDefaults: the departure window is on and keep-awake is
// auto unless told otherwise; both are unused on a netem link, and
// refused there when given on.
func TestEmulatorDefaults(t *testing.T) {
	for _, c := range []struct {
		args        []string
		awake, auto bool
		window      time.Duration
		err         string
	}{
		{nil, false, true, 200 * time.Microsecond, ""},
		{[]string{"-keep-awake", "off"}, false, false, 200 * time.Microsecond, ""},
		{[]string{"-backend", "emulator"}, false, true, 200 * time.Microsecond, ""},
		{[]string{"-keep-awake", "auto"}, false, true, 200 * time.Microsecond, ""},
		{[]string{"-keep-awake", "-departure-window", "0"}, true, false, 0, ""},
		{[]string{"-departure-window", "1ms"}, false, true, time.Millisecond, ""},
		{[]string{"-backend", "netem"}, false, false, 0, ""},
		{[]string{"-backend", "netem", "-keep-awake=false", "-departure-window", "0"}, false, false, 0, ""},
		{[]string{"-backend", "netem", "-keep-awake", "auto"}, false, false, 0, ""},
		{[]string{"-backend", "netem", "-keep-awake"}, false, false, 0, "-keep-awake: the netem backend has no emulator"},
		{[]string{"-backend", "netem", "-keep-awake", "on"}, false, false, 0, "-keep-awake: the netem backend has no emulator"},
		{[]string{"-backend", "netem", "-departure-window", "100us"}, false, false, 0, "-departure-window: the netem backend has no departures"},
		{[]string{"-departure-window", "2ms"}, false, false, 0, "-departure-window 2ms: give 0"},
		{[]string{"-departure-window", "-1us"}, false, false, 0, "-departure-window -1µs: give 0"},
	} {
		f, _ := parse(t, Config{Flags: LinkOptions}, c.args...)
		o, err := f.Options()
		switch {
		case c.err != "":
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v, want an error saying %q", c.args, err, c.err)
			}
		case err != nil || o.EmulatorKeepAwake != c.awake || o.EmulatorKeepAwakeAuto != c.auto || o.EmulatorDepartureWindow != c.window:
			t.Errorf("%q: keep-awake %v auto %v window %v (%v), want %v %v %v", c.args, o.EmulatorKeepAwake, o.EmulatorKeepAwakeAuto, o.EmulatorDepartureWindow, err, c.awake, c.auto, c.window)
		}
	}
	f, _ := parse(t, Config{Flags: Backend})
	if o, err := f.Options(); err != nil || o.EmulatorKeepAwake || o.EmulatorKeepAwakeAuto || o.EmulatorDepartureWindow != 0 {
		t.Errorf("without Emulator registered: %+v, %v; want the settings off", o, err)
	}
	f, _ = parse(t, Config{Flags: LinkOptions, KeepAwake: true})
	if o, err := f.Options(); err != nil || !o.EmulatorKeepAwake || o.EmulatorKeepAwakeAuto {
		t.Errorf("Config.KeepAwake: %+v, %v; want -keep-awake on by default", o, err)
	}
}

// TestKeepAwakeSpellings: -keep-awake takes on, off and auto, given as
// the next argument or after "=", alone is on, and the boolean spellings
// it had are on and off; anything else is refused, naming the values.
func TestKeepAwakeSpellings(t *testing.T) {
	for _, c := range []struct {
		args        []string
		awake, auto bool
	}{
		{[]string{"-keep-awake", "on"}, true, false},
		{[]string{"-keep-awake=on"}, true, false},
		{[]string{"-keep-awake", "off"}, false, false},
		{[]string{"-keep-awake=off", "-seed", "3"}, false, false},
		{[]string{"-keep-awake", "auto", "-seed", "3"}, false, true},
		{[]string{"-keep-awake=auto"}, false, true},
		{[]string{"-keep-awake"}, true, false},
		{[]string{"-keep-awake", "-seed", "3"}, true, false},
		{[]string{"-keep-awake=true"}, true, false},
		{[]string{"-keep-awake=false"}, false, false},
		{[]string{"--keep-awake=1"}, true, false},
		{[]string{"-keep-awake", "off", "-keep-awake"}, true, false},
	} {
		f, _ := parse(t, Config{Flags: LinkOptions}, c.args...)
		if o, err := f.Options(); err != nil || o.EmulatorKeepAwake != c.awake || o.EmulatorKeepAwakeAuto != c.auto {
			t.Errorf("%q: keep-awake %v auto %v (%v), want %v %v", c.args, o.EmulatorKeepAwake, o.EmulatorKeepAwakeAuto, err, c.awake, c.auto)
		}
	}
	for _, args := range [][]string{{"-keep-awake=maybe"}, {"-keep-awake="}, {"-keep-awake=ON"}} {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		Register(fs, Config{Flags: LinkOptions})
		err := cli.Parse(fs, args)
		if err == nil || !strings.Contains(err.Error(), "-keep-awake") || !strings.Contains(err.Error(), "want on, off or auto") {
			t.Errorf("%q: %v; want it refused, naming the flag and its values", args, err)
		}
	}
	// Another word after it is an argument: refused by a command that
	// takes none, the client command of one that does.
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	Register(fs, Config{Flags: LinkOptions})
	if err := cli.Parse(fs, []string{"-keep-awake", "maybe"}); err == nil || !strings.Contains(err.Error(), `"maybe"`) {
		t.Errorf("-keep-awake maybe: %v; want maybe refused as an argument", err)
	}
	fs = flag.NewFlagSet("test", flag.ContinueOnError)
	f := Register(fs, Config{Flags: LinkOptions})
	if err := cli.ParseWithArgs(fs, []string{"-keep-awake", "iperf3", "-c"}); err != nil || f.awake != awakeOn || strings.Join(fs.Args(), " ") != "iperf3 -c" {
		t.Errorf("-keep-awake iperf3 -c: %v, keep-awake %s, args %q; want on and the command left", err, f.awake, fs.Args())
	}
}

// TestHelpLeavesTheDefaultToFlag: no help text states a default (flag
// prints the real one), and -keep-awake's default is the command's.
func TestHelpLeavesTheDefaultToFlag(t *testing.T) {
	all := LinkOptions | Profiles
	for _, on := range []bool{false, true} {
		fs := flag.NewFlagSet("x", flag.ContinueOnError)
		Register(fs, Config{Flags: all, KeepAwake: on})
		want := "auto"
		if on {
			want = "on"
		}
		if fl := fs.Lookup(NameKeepAwake); fl.DefValue != want {
			t.Errorf("KeepAwake %v: -keep-awake defaults to %s, want %s", on, fl.DefValue, want)
		}
		fs.VisitAll(func(fl *flag.Flag) {
			if strings.Contains(strings.ToLower(fl.Usage), "by default") {
				t.Errorf("-%s's help states a default: %q", fl.Name, fl.Usage)
			}
		})
	}
}

// TestOptionsRefused: every wrong value is refused, all of them in one
// error, each naming its flag and what it takes.
func TestOptionsRefused(t *testing.T) {
	f, _ := parse(t, Config{Flags: LinkOptions}, "-backend", "inproc", "-mode", "user", "-offload", "")
	_, err := f.Options()
	for _, want := range []string{`-backend "inproc": want netem, emulator or empty`, `-mode "user": want root, unprivileged or empty`,
		`-offload "" is not an offload mode: use wire`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not say %q", err, want)
		}
	}
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	Register(fs, Config{Flags: Seed})
	if err := fs.Parse([]string{"-seed", "-1"}); err == nil {
		t.Error("-seed -1 was accepted")
	}
}

// TestProfiles: a list parses in order; a profile given twice under two
// spellings is refused naming both; an empty list and a bad profile are
// refused naming the flag.
func TestProfiles(t *testing.T) {
	f, _ := parse(t, Config{Flags: Profiles, Profiles: "80:10 150:2"}, "-profiles", "20:5  80:10,loss=ge:1/30")
	ps, err := f.Profiles()
	if err != nil || len(ps) != 2 || ps[0].String() != "20:5" || ps[1].String() != "80:10,loss=ge:1/30" {
		t.Fatalf("profiles %v, %v", ps, err)
	}
	for _, c := range []struct{ text, want string }{
		{"80:10 80:10.0", "-profiles: profile 80:10 is given twice (as 80:10 and 80:10.0"},
		{"", "-profiles: shapedlink: no profiles given"},
		{"80", `-profiles: shapedlink: profile "80"`},
	} {
		f, _ := parse(t, Config{Flags: Profiles, Profiles: "80:10"}, "-profiles", c.text)
		if _, err := f.Profiles(); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("-profiles %q: %v, want an error starting %q", c.text, err, c.want)
		}
	}
	if _, err := ParseProfiles(""); !errors.Is(err, shapedlink.ErrEmptyProfiles) {
		t.Errorf("an empty list: %v, want it to wrap shapedlink.ErrEmptyProfiles", err)
	}
	f, _ = parse(t, Config{Flags: Profile, Profiles: "80:10"})
	if p, err := f.Profile(); err != nil || p.String() != "80:10" {
		t.Errorf("-profile default: %v, %v", p, err)
	}
	f, _ = parse(t, Config{Flags: Profile, Profiles: "80:10"}, "-profile", "80:10 150:2")
	if _, err := f.Profile(); err == nil || !strings.HasPrefix(err.Error(), "-profile: ") {
		t.Errorf("two profiles to -profile: %v", err)
	}
	if _, err := f.Profiles(); err == nil {
		t.Error("Profiles without -profiles registered returned no error")
	}
}

// TestProfileList: a repeatable -profile reads its default list when not
// given; given, its values replace the default, one profile each, each
// once, in order; the help shows the default list.
func TestProfileList(t *testing.T) {
	cfg := Config{Flags: ProfileList | Seed, Profiles: "80:10 150:2:1", Seed: 1}
	f, _ := parse(t, cfg)
	ps, err := f.Profiles()
	if err != nil || len(ps) != 2 || ps[0].String() != "80:10" || ps[1].String() != "150:2:1" || f.ProfileGiven() {
		t.Errorf("default list: %v, %v, given=%v", ps, err, f.ProfileGiven())
	}
	f, _ = parse(t, cfg, "-profile", "20:5", "-profile", "80:10,loss=ge:1/30")
	ps, err = f.Profiles()
	if err != nil || len(ps) != 2 || ps[0].String() != "20:5" || ps[1].String() != "80:10,loss=ge:1/30" || !f.ProfileGiven() {
		t.Errorf("two given: %v, %v, given=%v", ps, err, f.ProfileGiven())
	}
	if f.ProfileText() != "20:5 80:10,loss=ge:1/30" {
		t.Errorf("ProfileText %q", f.ProfileText())
	}
	f.SetProfileDefault("5:1000")
	if f.ProfileText() != "20:5 80:10,loss=ge:1/30" {
		t.Errorf("a preset replaced the profiles given: %q", f.ProfileText())
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-profile", "80:10", "-profile", "80:10.0"}, "-profile: profile 80:10 is given twice (as 80:10 and 80:10.0"},
		{[]string{"-profile", "80:10 150:2"}, `-profile: shapedlink: profile "80:10 150:2"`},
		{[]string{"-profile", ""}, `-profile: shapedlink: profile ""`},
		{[]string{"-profile", "80"}, `-profile: shapedlink: profile "80"`},
	} {
		f, _ := parse(t, cfg, c.args...)
		if _, err := f.Profiles(); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error starting %q", c.args, err, c.want)
		}
	}
	f, _ = parse(t, Config{Flags: ProfileList})
	if _, err := f.Profiles(); !errors.Is(err, shapedlink.ErrEmptyProfiles) || !strings.HasPrefix(err.Error(), "-profile: ") {
		t.Errorf("no default and none given: %v, want -profile: and ErrEmptyProfiles", err)
	}
	if _, err := f.Profile(); err == nil {
		t.Error("Profile without a single -profile registered returned no error")
	}
	var b bytes.Buffer
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(&b)
	Register(fs, cfg)
	fs.PrintDefaults()
	for _, want := range []string{"-profile profile\n", "a link profile, " + shapedlink.ProfileGrammar + "; repeat the flag", "(default 80:10 150:2:1)"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("help does not say %q:\n%s", want, b.String())
		}
	}
}

// TestProfilesEnv: the environment variable replaces the default, a flag
// replaces both, and a preset replaces only the default.
func TestProfilesEnv(t *testing.T) {
	const env = "LINKFLAG_TEST_PROFILES"
	f, _ := parse(t, Config{Flags: Profiles, Profiles: "80:10", ProfilesEnv: env})
	f.SetProfileDefault("5:1000")
	if f.ProfileText() != "5:1000" || f.ProfileGiven() {
		t.Errorf("preset without flag or variable: %q given=%v", f.ProfileText(), f.ProfileGiven())
	}
	t.Setenv(env, "150:2")
	f, _ = parse(t, Config{Flags: Profiles, Profiles: "80:10", ProfilesEnv: env})
	f.SetProfileDefault("5:1000")
	if f.ProfileText() != "150:2" || !f.ProfileGiven() {
		t.Errorf("variable set: %q given=%v, want 150:2 kept over the preset", f.ProfileText(), f.ProfileGiven())
	}
	f, _ = parse(t, Config{Flags: Profiles, Profiles: "80:10", ProfilesEnv: env}, "-profiles", "20:5")
	f.SetProfileDefault("5:1000")
	if f.ProfileText() != "20:5" {
		t.Errorf("flag given: %q, want 20:5", f.ProfileText())
	}
}

// TestProfilesLookupEnv: a Config's LookupEnv is what reads the
// variable, in place of the process's environment.
func TestProfilesLookupEnv(t *testing.T) {
	const env = "LINKFLAG_TEST_PROFILES"
	t.Setenv(env, "150:2")
	vars := map[string]string{env: "20:5"}
	lookup := func(k string) (string, bool) { v, ok := vars[k]; return v, ok }
	f, _ := parse(t, Config{Flags: Profiles, Profiles: "80:10", ProfilesEnv: env, LookupEnv: lookup})
	if f.ProfileText() != "20:5" || !f.ProfileGiven() {
		t.Errorf("from LookupEnv: %q given=%v, want 20:5", f.ProfileText(), f.ProfileGiven())
	}
	delete(vars, env)
	f, _ = parse(t, Config{Flags: Profiles, Profiles: "80:10", ProfilesEnv: env, LookupEnv: lookup})
	if f.ProfileText() != "80:10" || f.ProfileGiven() {
		t.Errorf("LookupEnv without the variable: %q given=%v, want the default 80:10", f.ProfileText(), f.ProfileGiven())
	}
}

// TestHelp: each flag's help is this package's, names the profiles'
// variable, and shows a default only where there is one.
func TestHelp(t *testing.T) {
	var b bytes.Buffer
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(&b)
	Register(fs, Config{Flags: LinkOptions | Profiles, Profiles: "80:10", ProfilesEnv: "PROFILES", Offload: shapedlink.OffloadKeep})
	fs.PrintDefaults()
	for _, want := range []string{"(env PROFILES) (default \"80:10\")", `(default "keep")`, helpBackend, helpSeed} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("help does not say %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), `(default "")`) {
		t.Errorf("help shows an empty default:\n%s", b.String())
	}
}

// TestImportsOnlyLinks: the package links nothing of QUIC, SPICE or
// statistics, directly or not.
func TestImportsOnlyLinks(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the dependencies")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, bad := range []string{"quic-go", "/spicelike", "/stats", "/transport", "/measure"} {
			if strings.Contains(dep, bad) {
				t.Errorf("linkflag depends on %s", dep)
			}
		}
	}
}
