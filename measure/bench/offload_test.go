package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/twohost"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
)

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
	m := &Matrix{Losses: []float64{0}, CCs: []string{MatchedCC},
		Arms: []measure.ArmName{"tcp"}, Repeats: 1, Workdir: t.TempDir()}
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
	if code != ExitUsage || !strings.Contains(string(out), `cpucost: -offload "gso" is not an offload mode: use wire`) {
		t.Errorf("-offload gso: exit %d, stderr %q; want exit %d and the refusal", code, out, ExitUsage)
	}
	if _, err := os.Stat(workdir); err == nil {
		t.Errorf("a refused command made its work directory")
	}
}

// offloadMatrix is a small matrix for the work-directory tests.
func offloadMatrix(t *testing.T, dir string, o shapedlink.OffloadMode) *Matrix {
	t.Helper()
	m := &Matrix{Profiles: testProfiles(t, "5:1000"), Losses: []float64{0}, CCs: []string{MatchedCC},
		Arms: []measure.ArmName{"tcp", "quic"}, Repeats: 1, Workdir: dir}
	m.Link.Offload = o
	return m
}

// TestOffloadResumeRefused: a work directory holds one offload mode; a
// command with the other is refused (exit 2), naming both.
func TestOffloadResumeRefused(t *testing.T) {
	for _, c := range []struct {
		had, asked shapedlink.OffloadMode
		want       string
	}{
		{shapedlink.OffloadWire, shapedlink.OffloadKeep, `offload: "wire" there, "keep" asked`},
		{shapedlink.OffloadKeep, shapedlink.OffloadWire, `offload: "keep" there, "wire" asked`},
	} {
		dir := t.TempDir()
		release, err := offloadMatrix(t, dir, c.had).claimWorkdir()
		if err != nil {
			t.Fatal(err)
		}
		release.release()
		if release, err = offloadMatrix(t, dir, c.asked).claimWorkdir(); err == nil {
			release.release()
		}
		if !errors.Is(err, ErrWorkdir) || !strings.Contains(err.Error(), c.want) || ExitCode(err) != ExitUsage {
			t.Errorf("resuming %q with %q: %v (exit %d), want a refusal saying %q", c.had, c.asked, err, ExitCode(err), c.want)
		}
		if release, err = offloadMatrix(t, dir, c.had).claimWorkdir(); err != nil {
			t.Errorf("resuming %q with %q: %v", c.had, c.had, err)
		} else {
			release.release()
		}
	}
}

// TestOffloadRecord: matrix.json names keep, and says nothing of wire, so
// a wire matrix's record is byte for byte what it was before the mode
// existed: a work directory written then (docs/results/headline-150-2)
// reads as wire, resumes as wire and is refused as keep; a record that
// says "wire" outright reads as wire, one that says anything else is
// refused.
func TestOffloadRecord(t *testing.T) {
	old, err := os.ReadFile(filepath.Join("..", "..", "docs", "results", "headline-150-2", matrixFile))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, matrixFile), old, 0o644); err != nil {
		t.Fatal(err)
	}
	rec, m, err := readMatrixFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Link.Offload != shapedlink.OffloadWire || rec.Offload != "" {
		t.Errorf("a record from before -offload reads as %q (%q), want wire", m.Link.Offload, rec.Offload)
	}
	b, _ := json.MarshalIndent(m.record(), "", "  ")
	if !bytes.Equal(append(b, '\n'), old) {
		t.Errorf("the same wire matrix now writes another matrix.json:\n%s\nwant\n%s", b, old)
	}
	m.Workdir = dir
	release, err := m.claimWorkdir()
	if err != nil {
		t.Fatalf("resuming a record from before -offload as wire: %v", err)
	}
	release.release()
	m.Link.Offload = shapedlink.OffloadKeep
	if release, err = m.claimWorkdir(); err == nil {
		release.release()
	}
	if !errors.Is(err, ErrWorkdir) || !strings.Contains(err.Error(), `offload: "wire" there, "keep" asked`) {
		t.Errorf("resuming a record from before -offload as keep: %v", err)
	}
	if b, _ = json.Marshal(m.record()); !strings.Contains(string(b), `"offload":"keep"`) {
		t.Errorf("a keep matrix's record: %s", b)
	}

	for _, c := range []struct{ text, want string }{
		{`"wire"`, ""},
		{`"keep"`, "keep"},
		{`"gso"`, `offload: "gso" is not an offload mode: use wire`},
		{`1`, "offload:"},
	} {
		text := strings.Replace(string(old), `"qlog": false`, `"qlog": false, "offload": `+c.text, 1)
		if err := os.WriteFile(filepath.Join(dir, matrixFile), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		rec, _, err := readMatrixFile(dir)
		switch {
		case c.want == "" || c.want == "keep":
			if err != nil || string(rec.Offload) != c.want {
				t.Errorf("offload %s: %q, %v; want %q", c.text, rec.Offload, err, c.want)
			}
		case err == nil || !strings.Contains(err.Error(), c.want):
			t.Errorf("offload %s: %v, want an error containing %q", c.text, err, c.want)
		}
	}
}

// TestOffloadRemoteRefused: between two hosts no link is built, so a
// matrix that asks for an offload mode is refused, as one asking for a
// backend is (the flag itself is refused with -remote: TestRemoteFlags).
func TestOffloadRemoteRefused(t *testing.T) {
	m := offloadMatrix(t, t.TempDir(), shapedlink.OffloadKeep)
	m.Profiles, m.Losses = nil, nil
	m.Workload = spicelike.Defaults()
	m.Remote = &twohost.Client{Addr: "198.18.0.2:7390", Secret: []byte(strings.Repeat("s", twohost.MinSecretLen))}
	if err := m.Validate(); err == nil || err.Error() != "with -remote no link is built: a backend, privilege mode, emulator seed, offload mode or emulator setting does not apply" {
		t.Errorf("a two-host matrix keeping offloads: %v, want it refused", err)
	}
	m.Link.Offload, m.Link.EmulatorKeepAwake = shapedlink.OffloadWire, true
	if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "emulator setting does not apply") {
		t.Errorf("a two-host matrix keeping the emulator's CPUs awake: %v, want it refused", err)
	}
	m.Link.EmulatorKeepAwake = false
	if err := m.Validate(); err != nil {
		t.Errorf("a two-host matrix of wire-sized packets: %v", err)
	}
}

// TestNetemKeepWarnedOnce: a matrix whose links keep offloads on netem is
// warned about once, as it runs; on the emulator, or wire-sized, it is
// not.
func TestNetemKeepWarnedOnce(t *testing.T) {
	for _, c := range []struct {
		link results.Link
		want int
	}{
		{results.Link{Backend: "netem", Offload: "keep"}, 1},
		{results.Link{Backend: "emulator", Offload: "keep"}, 0},
		{results.Link{Backend: "netem"}, 0},
	} {
		var out bytes.Buffer
		p := newProgress(&out, 2, 0, time.Second)
		p.linkWarnings(c.link)
		p.linkWarnings(c.link)
		if got := strings.Count(out.String(), "warning: "+report.NetemKeepWarning); got != c.want {
			t.Errorf("%+v: warned %d times, want %d:\n%s", c.link, got, c.want, out.String())
		}
	}
}

// testProfiles parses profile texts a test gives.
func testProfiles(t *testing.T, texts ...string) []shapedlink.Profile {
	t.Helper()
	var ps []shapedlink.Profile
	for _, text := range texts {
		p, err := shapedlink.ParseProfile(text)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	return ps
}
