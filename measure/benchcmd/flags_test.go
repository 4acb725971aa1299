package benchcmd

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/bench"
	"github.com/shakenfist/quicbench/measure/plan"
	"github.com/shakenfist/quicbench/measure/twohost"
	"github.com/shakenfist/quicbench/shapedlink"

	"github.com/shakenfist/quicbench/measure/results"
)

// matrixEnv are the variables newFlags reads, the shard's included, which
// clearEnv unsets so that a test inside a Kubernetes Job inherits no shard.
var matrixEnv = []string{"PROFILES", "LOSSES", "CCS", "REPEATS", "DURATION", "WARMUP", "WORKDIR", "SESSIONS", "CAPS",
	"SHARD", "SHARDS", "JOB_COMPLETION_INDEX"}

// clearEnv unsets the matrix variables for one test, so that the machine's
// environment cannot decide its outcome.
func clearEnv(t *testing.T) {
	t.Helper()
	for _, k := range matrixEnv {
		if v, ok := os.LookupEnv(k); ok {
			os.Unsetenv(k)
			t.Cleanup(func() { os.Setenv(k, v) })
		}
	}
}

var (
	testDefaults = Defaults{Profiles: "80:10 150:2", Losses: "0 1 2", CCs: plan.MatchedCC, Arms: "tcp quic",
		Repeats: 5, Duration: 45 * time.Second, Warmup: 5 * time.Second, Workdir: "results/x"}
	testQuick = Defaults{Profiles: "80:10", Losses: "1", Repeats: 3, Duration: 30 * time.Second,
		Warmup: 5 * time.Second, Workdir: "results/x-quick"}
)

// parseMatrix parses args as a matrix command would, with env set first.
func parseMatrix(t *testing.T, env map[string]string, args ...string) (*plan.Matrix, error) {
	t.Helper()
	_, m, err := parseFlags(t, env, args...)
	return m, err
}

// parseFlags is parseMatrix with the flags it parsed.
func parseFlags(t *testing.T, env map[string]string, args ...string) (*matrixFlags, *plan.Matrix, error) {
	t.Helper()
	clearEnv(t)
	for k, v := range env {
		t.Setenv(k, v)
	}
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := newFlags(fs, Defaults{Axes: []AxisFlag{SessionsFlag("1 2"), CapsFlag("0 0.5")}, Profiles: testDefaults.Profiles,
		Losses: testDefaults.Losses, CCs: testDefaults.CCs, Arms: testDefaults.Arms, Repeats: testDefaults.Repeats,
		Duration: testDefaults.Duration, Warmup: testDefaults.Warmup, Workdir: testDefaults.Workdir}, testQuick)
	if err := fs.Parse(args); err != nil {
		return nil, nil, err
	}
	m, err := f.matrix()
	return f, m, err
}

// TestQuickLetsExplicitValuesThrough: -quick sets the defaults, and flags or
// variables given with it win (they were silently dropped before).
func TestQuickLetsExplicitValuesThrough(t *testing.T) {
	m, err := parseMatrix(t, nil, "-quick", "-duration", "8s", "-repeats", "1")
	if err != nil {
		t.Fatal(err)
	}
	if m.Repeats != 1 || m.Workload.Duration != 8*time.Second {
		t.Errorf("-quick -duration 8s -repeats 1 gave %d repeats of %v", m.Repeats, m.Workload.Duration)
	}
	if got := profilesText(m.Profiles); got != testQuick.Profiles || len(m.Losses) != 1 || m.Workdir != testQuick.Workdir {
		t.Errorf("quick's own values not applied: profiles %q losses %v workdir %s", got, m.Losses, m.Workdir)
	}
	m, err = parseMatrix(t, map[string]string{"LOSSES": "0 2", "WORKDIR": "results/y"}, "-quick", "-profiles", "20:5")
	if err != nil {
		t.Fatal(err)
	}
	if m.Profiles[0].String() != "20:5" || len(m.Losses) != 2 || m.Workdir != "results/y" || m.Repeats != testQuick.Repeats {
		t.Errorf("flag and variables with -quick: profiles %v losses %v workdir %s repeats %d", profilesText(m.Profiles), m.Losses, m.Workdir, m.Repeats)
	}
}

// TestEmulatorSettings: a matrix command batches the emulator's
// departures within 200 us and decides keep-awake by probing the host
// unless told otherwise (bench's TestEmulatorSettingsRecorded:
// matrix.json records them).
func TestEmulatorSettings(t *testing.T) {
	m, err := parseMatrix(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Link.EmulatorKeepAwake || !m.Link.EmulatorKeepAwakeAuto || m.Link.EmulatorDepartureWindow != 200*time.Microsecond {
		t.Errorf("defaults: %+v; want a 200us window and keep-awake auto", m.Link)
	}
	off, err := parseMatrix(t, nil, "-keep-awake", "-departure-window", "0")
	if err != nil {
		t.Fatal(err)
	}
	if !off.Link.EmulatorKeepAwake || off.Link.EmulatorDepartureWindow != 0 {
		t.Errorf("-keep-awake -departure-window 0: %+v; want both changed", off.Link)
	}
}

// TestBadEnvironmentOverriddenByFlag: a bad variable matters only when no
// flag replaces it.
func TestBadEnvironmentOverriddenByFlag(t *testing.T) {
	for _, k := range []string{"DURATION", "WARMUP", "REPEATS"} {
		flagName := strings.ToLower(k)
		if _, err := parseMatrix(t, map[string]string{k: "abc"}); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("%s=abc alone: %v, want an error naming %s", k, err, k)
		}
		val := "30s"
		if k == "REPEATS" {
			val = "2"
		}
		if _, err := parseMatrix(t, map[string]string{k: "abc"}, "-"+flagName, val); err != nil {
			t.Errorf("%s=abc with -%s %s: %v", k, flagName, val, err)
		}
	}
}

// TestMatrixInputRefused: every bad number, repeated value and oversized
// matrix is refused before anything runs, with a message that names it.
func TestMatrixInputRefused(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-losses", "NaN"}, `loss "NaN" is not a finite number`},
		{[]string{"-losses", "1 Inf"}, `loss "Inf" is not a finite number`},
		{[]string{"-losses", "-1"}, "outside [0, 100)"},
		{[]string{"-caps", "NaN"}, `cap "NaN"`},
		{[]string{"-duration", "NaN"}, "not a number of seconds"},
		{[]string{"-duration", "1e300"}, "not a number of seconds from 0 to 24h0m0s"},
		{[]string{"-duration", "-5"}, "not a number of seconds"},
		{[]string{"-duration", "100000h"}, "outside 0 to 24h0m0s"},
		{[]string{"-warmup", "Inf"}, "not a number of seconds"},
		{[]string{"-losses", "0 0.0"}, `loss "0.0" repeats "0"`},
		{[]string{"-profiles", "80:10 80:10.0"}, "profile 80:10 is given twice"},
		{[]string{"-arms", "tcp tcp"}, `arm "tcp" is given twice`},
		{[]string{"-ccs", "reno reno"}, `congestion control "reno" is given twice`},
		{[]string{"-sessions", "2 2"}, `sessions "2" is given twice`},
		{[]string{"-caps", "0.5 .5"}, `cap ".5" repeats "0.5"`},
		{[]string{"-repeats", "100000000"}, "give 1 to 1000"},
		{[]string{"-repeats", "0"}, "give 1 to 1000"},
		{[]string{"-repeats", "1000", "-losses", "0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25"}, "more than 100000"},
	} {
		_, err := parseMatrix(t, nil, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want an error containing %q", c.args, err, c.want)
		}
	}
	if _, err := parseMatrix(t, nil, "-losses", "0 1", "-duration", "45", "-caps", "0 0.5"); err != nil {
		t.Errorf("a good matrix refused: %v", err)
	}
}

// TestExitCodes: the codes the README documents.
func TestExitCodes(t *testing.T) {
	for _, c := range []struct {
		err  error
		want int
	}{
		{nil, exitOK},
		{fmt.Errorf("2 of 12 runs failed: %w", bench.ErrRunsFailed), exitFailed},
		{errors.New("writing run.json: no space left on device"), exitFailed},
		{plan.ErrWorkdir, exitUsage},
		{errors.Join(errors.New("x"), plan.ErrWorkdir), exitUsage},
		{results.ErrInterrupted, exitInterrupted},
		{fmt.Errorf("%w: wrong proof", twohost.ErrRefused), exitUsage},
	} {
		if got := exitCode(c.err); got != c.want {
			t.Errorf("exitCode(%v) = %d, want %d", c.err, got, c.want)
		}
	}
}

// FuzzMatrixFlags: whatever the command line and the reference's variables
// say, building the matrix returns an error or a matrix that validates,
// holds no repeated value and stays within MaxRuns; it never panics or
// plans without bound.
func FuzzMatrixFlags(f *testing.F) {
	f.Add("-quick -duration 8s -repeats 1", "80:10", "0 1")
	f.Add("-losses NaN", "", "")
	f.Add("-duration 1e300", "80:10 80:10.0", "0 0.0")
	f.Add("-repeats 100000000 -arms tcp", "", "Inf")
	f.Add("-sessions 1 -caps 0.5", "150:2", "2")
	f.Fuzz(func(t *testing.T, args, profiles, losses string) {
		if strings.ContainsRune(profiles+losses, 0) {
			return // no environment can hold a NUL
		}
		env := map[string]string{}
		if profiles != "" {
			env["PROFILES"] = profiles
		}
		if losses != "" {
			env["LOSSES"] = losses
		}
		m, err := parseMatrix(t, env, strings.Fields(args)...)
		if err != nil {
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("Matrix returned a matrix that does not validate: %v", err)
		}
		if n := len(m.Plan()); n > 100000 {
			t.Fatalf("%d runs planned, more than 100000", n)
		}
		seen := map[string]bool{}
		for _, rc := range m.Plan() {
			k := rc.Dir()
			if seen[k] {
				t.Fatalf("two runs write %s", k)
			}
			seen[k] = true
		}
	})
}

// TestArmsHelpNamesTheControllerForm: -arms' help lists tcp-<controller>
// beside the registered arms.
func TestArmsHelpNamesTheControllerForm(t *testing.T) {
	fs := flag.NewFlagSet("headline", flag.ContinueOnError)
	newFlags(fs, Defaults{Arms: "tcp quic"}, Defaults{})
	if u := fs.Lookup("arms").Usage; !strings.Contains(u, "tcp-<controller>") {
		t.Errorf("-arms' help: %q", u)
	}
}

// profilesText is profiles as -profiles would give them.
func profilesText(ps []shapedlink.Profile) string {
	var texts []string
	for _, p := range ps {
		texts = append(texts, p.String())
	}
	return strings.Join(texts, " ")
}
