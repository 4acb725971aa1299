package main

import (
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/spicelive"
	"github.com/shakenfist/quicbench/measure/spicelive/summary"
	"github.com/shakenfist/quicbench/measure/spicelive/xsession"
	"github.com/shakenfist/quicbench/transport"
)

func noEnv(string) string { return "" }

func TestDefaultsAreTheHeadlinesCells(t *testing.T) {
	c, m, err := parseFlags(nil, io.Discard, noEnv)
	summary := m.summary
	if err != nil || summary {
		t.Fatal(err, summary)
	}
	if want := []string{"80:10", "80:10:1", "150:2", "150:2:1"}; !slices.Equal(c.Profiles, want) {
		t.Errorf("profiles %v, want %v", c.Profiles, want)
	}
	if want := []measure.Arm{measure.TCP, measure.QUIC, measure.QUICPerChannel}; !slices.Equal(c.Arms, want) {
		t.Errorf("arms %v", c.Arms)
	}
	if c.Repeats != 5 || c.Duration != 45*time.Second || c.Warmup != 5*time.Second || c.CC != "reno" {
		t.Errorf("repeats %d, duration %v, warm-up %v, cc %s", c.Repeats, c.Duration, c.Warmup, c.CC)
	}
	plan := c.Plan()
	if len(plan) != 4*5*3*3 {
		t.Fatalf("%d runs planned, want 180", len(plan))
	}
	// Interleaved: a cell's first repeat covers every arm and reading
	// before its second begins.
	if plan[0].Repeat != 1 || plan[8].Repeat != 1 || plan[9].Repeat != 2 || plan[1].Reading != spicelive.ReadingReplay || plan[3].Arm != measure.QUIC {
		t.Errorf("plan does not interleave: %+v", plan[:10])
	}
}

func TestEnvironmentAndControlDefaults(t *testing.T) {
	env := map[string]string{"PROFILES": "20:50", "LOSSES": "2", "REPEATS": "3", "DURATION": "30", "WARMUP": "4", "WORKDIR": "x"}
	c, _, err := parseFlags([]string{"-arms", "quic"}, io.Discard, func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Profiles, []string{"20:50:2"}) || c.Repeats != 3 || c.Duration != 30*time.Second || c.Warmup != 4*time.Second || c.Workdir != "x" {
		t.Errorf("from the environment: %+v", c)
	}
	c, _, err = parseFlags([]string{"-control", "-repeats", "2"}, io.Discard, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.Profiles, []string{"10:100", "110:100"}) || !slices.Equal(c.Arms, []measure.Arm{measure.TCP}) ||
		!slices.Equal(c.Readings, []string{spicelive.ReadingLive}) || !c.Control {
		t.Errorf("control: %+v", c)
	}
	if c.ReadingDir(spicelive.ReadingLive) != "results/spicelive/control" {
		t.Errorf("the control's runs go to %s", c.ReadingDir(spicelive.ReadingLive))
	}
}

func TestFlagsSayWhatIsWrong(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-profiles", "80:10:1"}, "carries its own loss"},
		{[]string{"-losses", "x"}, `loss "x"`},
		{[]string{"-arms", "quic-priority"}, "no channel to prioritise"},
		{[]string{"-arms", "tcp tcp"}, "names tcp twice"},
		{[]string{"-readings", "recorded"}, `"recorded" is not a reading`},
		{[]string{"-repeats", "0"}, "-repeats 0"},
		{[]string{"-duration", "10", "-warmup", "10"}, "warm-up < duration"},
		{[]string{"-duration", "soon"}, "neither seconds nor a duration"},
		{[]string{"-key-interval", "10ms"}, "-key-interval 10ms"},
		{[]string{"-backend", "tc"}, `-backend "tc"`},
		{[]string{"-reference", "fast"}, "-reference"},
		{[]string{"leftover"}, "unexpected arguments"},
		{[]string{"-repeats", "100000"}, "-repeats 100000: want 1 to 1000"},
		{[]string{"-settle", "100000h"}, "-settle 100000h0m0s: want 0 to 10m"},
		{[]string{"-busy-interval", "1h"}, "-busy-interval 1h0m0s: want 10ms to 10s"},
		// Every problem, not the first only.
		{[]string{"-repeats", "0", "-settle", "-1s"}, "-settle -1s"},
		{[]string{"-readings", "live", "-reference", "1:100"}, "-reference is used by the replay reading only"},
		{[]string{"-readings", "live replay", "-reference", "fast"}, "-reference"},
		// The control sets arms, losses and readings itself: what is given
		// is refused by name, and checked all the same.
		{[]string{"-control", "-arms", "quic bogus"}, "-arms is not used by -control"},
		{[]string{"-control", "-arms", "quic bogus"}, `"bogus"`},
		{[]string{"-control", "-losses", "5 zz"}, "-losses is not used by -control"},
		{[]string{"-control", "-losses", "5 zz"}, `loss "zz"`},
		{[]string{"-control", "-readings", "replay"}, "-readings is not used by -control"},
		{[]string{"-control", "-reference", "1:100"}, "-reference is not used by -control"},
		// -summary reads the work directory's own settings.
		{[]string{"-summary", "-repeats", "3"}, "-repeats is not used by -summary"},
		{[]string{"-summary", "-control"}, "-control is not used by -summary"},
		// -replay names the replay's source; -record records one.
		{[]string{"-replay", "pictures"}, `-replay "pictures": want images, video, reference`},
		{[]string{"-readings", "live", "-replay", "video"}, "-replay is used by the replay reading only"},
		{[]string{"-record", "desktop"}, `-record "desktop": want video or images`},
		{[]string{"-record", "video", "-arms", "quic"}, "-arms is not used by -record"},
		{[]string{"-record", "video", "-display", "images"}, "-display is not used by -record"},
		{[]string{"-record", "video", "-record-span", "-1s"}, "-record-span -1s"},
		{[]string{"-record-span", "10s"}, "-record-span goes with -record"},
	} {
		_, _, err := parseFlags(tc.args, io.Discard, noEnv)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error saying %q", tc.args, err, tc.want)
		}
	}
}

// $LOSSES is the default of -losses: the control does not use it, and
// does not refuse it, but a bad one is still an error.
func TestControlChecksTheEnvironment(t *testing.T) {
	env := map[string]string{"LOSSES": "1 zz"}
	_, _, err := parseFlags([]string{"-control"}, io.Discard, func(k string) string { return env[k] })
	if err == nil || !strings.Contains(err.Error(), `loss "zz"`) {
		t.Errorf("LOSSES=%q with -control: %v", env["LOSSES"], err)
	}
	env["LOSSES"] = "1"
	if _, _, err := parseFlags([]string{"-control"}, io.Discard, func(k string) string { return env[k] }); err != nil {
		t.Errorf("LOSSES=1 with -control: %v", err)
	}
	if _, _, err := parseFlags([]string{"-summary", "-workdir", "x"}, io.Discard, noEnv); err != nil {
		t.Errorf("-summary -workdir: %v", err)
	}
}

// The replay reading plays the -display workload's shipped recording, or
// the reference with -display none or -replay reference; -record records
// the workload's session alone.
func TestReplaySource(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"-display", "video"}, "video"},
		{[]string{"-display", "images"}, "images"},
		{[]string{"-display", "video", "-replay", "reference"}, ""},
		{[]string{"-replay", "images"}, "images"},
		{[]string{"-display", "video", "-readings", "live"}, ""},
	} {
		c, _, err := parseFlags(tc.args, io.Discard, noEnv)
		if err != nil || c.Recording != tc.want {
			t.Errorf("%q: recording %q (%v), want %q", tc.args, c.Recording, err, tc.want)
		}
	}
	c, m, err := parseFlags([]string{"-record", "images", "-record-span", "20s", "-workdir", "x"}, io.Discard, noEnv)
	if err != nil || m.record != "images" || m.recordSpan != 20*time.Second || c.Display != xsession.DisplayImages || c.Recording != "" ||
		!slices.Equal(c.Readings, []string{spicelive.ReadingReplay}) || !slices.Equal(c.Arms, []measure.Arm{measure.TCP}) {
		t.Errorf("-record images: %+v %+v %v", c, m, err)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("-record images: %v", err)
	}
}

// What the command line accepts, the library's Run accepts: its checks
// are the same ones.
func TestFlagsMakeValidConfigs(t *testing.T) {
	for _, args := range [][]string{nil, {"-control"}, {"-profiles", "80:10,jitter=5", "-losses", "0 2.5", "-readings", "live replay", "-reference", "20:50"}} {
		c, _, err := parseFlags(args, io.Discard, noEnv)
		if err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if err := c.Validate(); err != nil {
			t.Errorf("%q: the library refuses what the command line took: %v", args, err)
		}
	}
}

// TestLinkFlags: -profiles, -backend and -seed are linkflag's: a profile
// given twice is refused, and a wrong profile or backend is said once,
// beside the command's other errors. $PROFILES gives -profiles' default
// when it is set and not empty, and the help names it.
func TestLinkFlags(t *testing.T) {
	c, _, err := parseFlags([]string{"-profiles", "20:5", "-backend", "emulator", "-seed", "3"}, io.Discard, noEnv)
	if err != nil || !slices.Equal(c.Profiles, []string{"20:5", "20:5:1"}) || c.Backend != "emulator" || c.Seed != 3 {
		t.Errorf("-profiles 20:5 -backend emulator -seed 3: %v %q %d, %v", c.Profiles, c.Backend, c.Seed, err)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-profiles", "80:10 80:10.0"}, []string{"-profiles: profile 80:10 is given twice"}},
		{[]string{"-profiles", "80", "-backend", "tc", "-repeats", "0"}, []string{`-profiles: shapedlink: profile "80"`, `-backend "tc": want netem, emulator or empty`, "-repeats 0"}},
	} {
		_, _, err := parseFlags(tc.args, io.Discard, noEnv)
		for _, want := range tc.want {
			if err == nil || strings.Count(err.Error(), want) != 1 {
				t.Errorf("%q: %v, want an error saying %q once", tc.args, err, want)
			}
		}
		if err != nil && strings.Contains(err.Error(), "no cells") {
			t.Errorf("%q: %v: a wrong profile is not a missing one", tc.args, err)
		}
	}
	env := map[string]string{"PROFILES": ""}
	if c, _, err := parseFlags(nil, io.Discard, func(k string) string { return env[k] }); err != nil || len(c.Profiles) != 4 {
		t.Errorf("PROFILES empty: %v, %v; want the default profiles", c.Profiles, err)
	}
	var help strings.Builder
	_, _, _ = parseFlags([]string{"-h"}, &help, noEnv)
	if !strings.Contains(help.String(), "(env PROFILES)") {
		t.Errorf("-h does not name $PROFILES:\n%s", help.String())
	}
}

// TestControllersCheckedBeforeAnythingRuns: a -cc or a tcp-<cc> arm that
// cannot run here is refused by the flags, exit 2, nothing made, and no
// claim that a work directory holds results.
func TestControllersCheckedBeforeAnythingRuns(t *testing.T) {
	for _, args := range [][]string{{"-cc", "../../../../esc2"}, {"-cc", "quicreno2"}, {"-cc", "a b"}, {"-cc", ""},
		{"-arms", "tcp tcp-quicreno2"}, {"-arms", "tcp-nosuchcc"}} {
		_, _, err := parseFlags(args, io.Discard, noEnv)
		if err == nil || !strings.Contains(err.Error(), args[0]) {
			t.Fatalf("%q: %v; want it refused, naming %s", args, err, args[0])
		}
		dir := t.TempDir() + "/w"
		var stdout, stderr strings.Builder
		code := mainCode(append(args, "-workdir", dir), &stdout, &stderr)
		if _, serr := os.Stat(dir); code != 2 || strings.Contains(stderr.String(), "kept in") || serr == nil {
			t.Errorf("%q: exit %d, stderr %q, work directory made %v; want 2, no claim, nothing made", args, code, stderr.String(), serr == nil)
		}
	}
	avail, err := transport.AvailableCongestionControl()
	if err != nil {
		t.Skip(err)
	}
	for _, cc := range []string{"reno", "cubic", "bbr"} {
		if !slices.Contains(avail, cc) {
			continue
		}
		if _, _, err := parseFlags([]string{"-cc", cc, "-arms", "tcp tcp-" + cc}, io.Discard, noEnv); err != nil {
			t.Errorf("-cc %s: %v", cc, err)
		}
	}
}

// TestHelpSaysTheArmFormsAndTheDisplayDuration: -h lists the
// tcp-<controller> arms and -duration's default with -display.
func TestHelpSaysTheArmFormsAndTheDisplayDuration(t *testing.T) {
	var out strings.Builder
	if _, _, err := parseFlags([]string{"-h"}, &out, noEnv); err == nil {
		t.Fatal("-h: no flag.ErrHelp")
	}
	for _, want := range []string{"tcp-<controller> (tcp-bbr", "with a -display workload it is 1m30s", "reno, cubic, bbr", "+defer10"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-h lacks %q", want)
		}
	}
}

// TestSamplesRefusesSymlinks: -samples does not write through a symbolic
// link (the directory or a sample file), and leaves its target alone.
func TestSamplesRefusesSymlinks(t *testing.T) {
	for _, link := range []string{"", summary.KeysCSV, summary.RunsCSV} {
		dir := t.TempDir()
		target := filepath.Join(t.TempDir(), "precious")
		if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
			t.Fatal(err)
		}
		samples := filepath.Join(dir, "s")
		if link == "" {
			if err := os.Symlink(filepath.Dir(target), samples); err != nil {
				t.Fatal(err)
			}
		} else {
			if err := os.Mkdir(samples, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(target, filepath.Join(samples, link)); err != nil {
				t.Fatal(err)
			}
		}
		var stdout, stderr strings.Builder
		code := mainCode([]string{"-samples", samples, "-workdir", filepath.Join(dir, "w")}, &stdout, &stderr)
		if b, _ := os.ReadFile(target); code != 2 || !strings.Contains(stderr.String(), "is a symbolic link") || string(b) != "keep" {
			t.Errorf("link %q: exit %d, stderr %q, target %q", link, code, stderr.String(), b)
		}
	}
}
