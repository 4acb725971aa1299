package benchcmd

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/plan"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
)

// TestArmsFlagChecked: an unknown arm given to -arms is refused by the
// matrix, naming it (bench's TestArmsCheckedByMatrix checks one from code).
func TestArmsFlagChecked(t *testing.T) {
	if _, err := parseMatrix(t, nil, "-arms", "tcp quic-fast"); err == nil || !strings.Contains(err.Error(), `unknown arm "quic-fast"`) {
		t.Errorf("-arms with an unknown arm: %v", err)
	}
}

// gapFlag is a matrix axis of the test's own, added as a command would
// add one: the interactive channel's gap after each echo.
func gapFlag(def string) AxisFlag {
	return newAxisFlag("gap", "GAPS", def, "gaps after each echo, one cell each", func(rc *plan.Run, v string) {
		d, err := time.ParseDuration(v)
		if err == nil {
			rc.Workload.EchoGap = d
		}
	})
}

func parseGapMatrix(t *testing.T, args ...string) (*plan.Matrix, error) {
	t.Helper()
	clearEnv(t)
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	d := testDefaults
	d.Axes = []AxisFlag{gapFlag("20ms 5ms")}
	f := newFlags(fs, d, testQuick)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	return f.matrix()
}

// TestOffloadFlag: -offload is wire unless keep is asked for, and any
// other value is refused naming the flag, the value and both choices.
func TestOffloadFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want shapedlink.OffloadMode
	}{
		{nil, shapedlink.OffloadWire},
		{[]string{"-offload", "wire"}, shapedlink.OffloadWire},
		{[]string{"-offload", "keep"}, shapedlink.OffloadKeep},
		{[]string{"-quick", "-offload", "keep"}, shapedlink.OffloadKeep},
	} {
		m, err := parseMatrix(t, nil, c.args...)
		if err != nil {
			t.Errorf("%q: %v", c.args, err)
			continue
		}
		if m.Link.Offload != c.want {
			t.Errorf("%q: offload mode %q, want %q", c.args, m.Link.Offload, c.want)
		}
		for _, rc := range m.Plan() {
			if rc.Link.Offload != c.want {
				t.Fatalf("%q: a run of the plan builds its link with offload %q, want %q", c.args, rc.Link.Offload, c.want)
			}
		}
	}
	for _, bad := range []string{"", "Keep", "gso", "on", "wire "} {
		_, err := parseMatrix(t, nil, "-offload", bad)
		if err == nil {
			t.Errorf("-offload %q was accepted", bad)
			continue
		}
		for _, want := range []string{`-offload "` + bad + `"`, "use wire", "or keep"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("-offload %q: %v, want an error containing %q", bad, err, want)
			}
		}
	}
	m := &plan.Matrix{Losses: []float64{0}, CCs: []string{plan.MatchedCC},
		Arms: []measure.Arm{"tcp"}, Repeats: 1, Workdir: t.TempDir()}
	m.Workload = spicelike.Defaults()
	m.Profiles, _ = shapedlink.ParseProfiles("20:10")
	m.Link.Offload = "gso"
	if err := m.Validate(); err == nil || !strings.HasPrefix(err.Error(), `offload mode "gso"`) {
		t.Errorf("a matrix built with offload mode \"gso\": %v, want it refused by name", err)
	}
}

// TestOffloadFlagExitsUsage: the command refuses a bad -offload with exit
// code 2 and the reason on stderr, before anything runs.
func TestOffloadFlagExitsUsage(t *testing.T) {
	if os.Geteuid() != 0 {
		// Without root, Main re-executes itself into a user namespace,
		// here the test binary.
		t.Skip("Main is called in process only as root")
	}
	clearEnv(t)
	stderr, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	workdir := filepath.Join(t.TempDir(), "w")
	args, errOut := os.Args, os.Stderr
	// -repeats 0 as well: were the refusal lost, the matrix would still
	// be refused rather than run.
	os.Args, os.Stderr = []string{"cpucost", "-offload", "gso", "-repeats", "0", "-workdir", workdir}, stderr
	code := Main("cpucost", "test", testDefaults, testQuick, nil)
	os.Args, os.Stderr = args, errOut
	out, _ := os.ReadFile(stderr.Name())
	if code != exitUsage || !strings.Contains(string(out), `cpucost: -offload "gso" is not an offload mode: use wire`) {
		t.Errorf("-offload gso: exit %d, stderr %q; want exit %d and the refusal", code, out, exitUsage)
	}
	if _, err := os.Stat(workdir); err == nil {
		t.Errorf("a refused command made its work directory")
	}
}

// TestShardFlagReachesTheMatrix: every matrix command's flags carry -shard
// and the variables into Matrix.Shard, and Validate refuses more shards
// than the matrix has units.
func TestShardFlagReachesTheMatrix(t *testing.T) {
	m, err := parseMatrix(t, map[string]string{"SHARD": "1/2"}, "-shard", "2/5", "-repeats", "1")
	if err != nil {
		t.Fatal(err)
	}
	if m.Shard != (plan.Shard{Index: 2, Count: 5}) {
		t.Errorf("-shard 2/5 with SHARD=1/2 gave %v", m.Shard)
	}
	if m, err = parseMatrix(t, map[string]string{"JOB_COMPLETION_INDEX": "1", "SHARDS": "3"}); err != nil {
		t.Errorf("JOB_COMPLETION_INDEX=1 SHARDS=3: %v", err)
	} else if m.Shard != (plan.Shard{Index: 1, Count: 3}) {
		t.Errorf("JOB_COMPLETION_INDEX=1 SHARDS=3 gave %v", m.Shard)
	}
	if _, err := parseMatrix(t, map[string]string{"JOB_COMPLETION_INDEX": "1"}); err == nil || !strings.Contains(err.Error(), "SHARDS") {
		t.Errorf("JOB_COMPLETION_INDEX without SHARDS: %v", err)
	}
	// 2 profiles x 1 loss x 1 cc x 1 session count x 1 cap x 2 repeats is 4 units.
	args := []string{"-losses", "1", "-repeats", "2", "-sessions", "1", "-caps", "0"}
	if _, err := parseMatrix(t, nil, append(args, "-shard", "3/4")...); err != nil {
		t.Errorf("4 shards of 4 units: %v", err)
	}
	if _, err := parseMatrix(t, nil, append(args, "-shard", "0/5")...); err == nil || !strings.Contains(err.Error(), "at most 4 shards") {
		t.Errorf("5 shards of 4 units: %v", err)
	}
}

// testSecret is a secret long enough for -secret-file.
var testSecret = []byte("a test secret, long enough")

// TestRemoteFlags: -remote makes a matrix of the path's cells, refuses
// what would shape a link (bench's TestRemoteRecord: matrix.json never
// records the secret).
func TestRemoteFlags(t *testing.T) {
	secretFile := filepath.Join(t.TempDir(), "bench.secret")
	if err := os.WriteFile(secretFile, append(testSecret, '\n'), 0o600); err != nil {
		t.Fatal(err)
	}
	f, m, err := parseFlags(t, nil, "-remote", "server.example:7390", "-secret-file", secretFile, "-caps", "0", "-sessions", "1", "-repeats", "2")
	if err != nil {
		t.Fatal(err)
	}
	if m.Remote != "server.example:7390" || f.remote == nil || f.remote.Addr != m.Remote || string(f.remote.Secret) != string(testSecret) {
		t.Fatalf("Remote %q, client %+v", m.Remote, f.remote)
	}
	plan := m.Plan()
	if len(plan) != 2*2 { // 1 cell x 2 repeats x tcp, quic
		t.Errorf("%d runs planned, want 4", len(plan))
	}
	for _, rc := range plan {
		c := rc.Cell
		if c.Profile != results.PathProfile || c.RTTms != 0 || c.RateMbit != 0 || c.LossPct != 0 {
			t.Errorf("a two-host cell: %+v", c)
		}
		if !strings.HasPrefix(c.Dir(), "path_reno") || !strings.Contains(c.Title(), "as found") {
			t.Errorf("a two-host cell is named %q, titled %q", c.Dir(), c.Title())
		}
	}
	if m.Link.EmulatorKeepAwake || m.Link.EmulatorKeepAwakeAuto || m.Link.EmulatorDepartureWindow != 0 {
		t.Errorf("a two-host matrix has the emulator's settings (%+v); no link is built", m.Link)
	}

	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"-profiles", "80:10"}, "-profiles"},
		{nil, []string{"-losses", "1"}, "-losses"},
		{map[string]string{"PROFILES": "80:10"}, nil, "PROFILES"},
		{nil, []string{"-backend", "netem"}, "-backend"},
		{nil, []string{"-seed", "3"}, "-seed"},
		{nil, []string{"-offload", "keep"}, "-offload"},
		{nil, []string{"-offload", "wire"}, "-offload"},
		{nil, []string{"-keep-awake=false"}, "-keep-awake"},
		{nil, []string{"-departure-window", "0"}, "-departure-window"},
		{nil, []string{"-caps", "0 0.5"}, "-caps 0"},
		{nil, []string{"-idle-timeout", "1m"}, "-idle-timeout"},
	} {
		args := append([]string{"-remote", "server.example:7390", "-secret-file", secretFile, "-caps", "0"}, tc.args...)
		if _, err := parseMatrix(t, tc.env, args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v %v: %v, want an error naming %q", tc.env, tc.args, err, tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-remote", "server.example:7390", "-caps", "0"}, "-secret-file is required"},
		{[]string{"-remote", "server.example", "-secret-file", secretFile, "-caps", "0"}, "HOST:PORT"},
		{[]string{"-secret-file", secretFile}, "only with -serve or -remote"},
	} {
		if _, err := parseMatrix(t, nil, tc.args...); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error naming %q", tc.args, err, tc.want)
		}
	}
}

// newAxisFlag is the flag of one of the matrix's own axes (plan.NewAxis): its
// values, space-separated, each once, become the axis called name, whose
// set changes what a value changes in a run.
func newAxisFlag(name, env, def, help string, set func(r *plan.Run, value string)) AxisFlag {
	return AxisFlag{Name: name, Env: env, Default: def, Help: help, Set: func(m *plan.Matrix, text string) error {
		values, err := uniqueFields(text, name)
		if err != nil {
			return err
		}
		if len(values) == 0 {
			return fmt.Errorf("-%s is empty: give at least one value", name)
		}
		m.Axes = append(m.Axes, plan.NewAxis(name, values, set))
		return nil
	}}
}
