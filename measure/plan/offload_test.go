package plan

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
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
)

// offloadMatrix is a small matrix for the work-directory tests.
func offloadMatrix(t *testing.T, dir string, o shapedlink.OffloadMode) *Matrix {
	t.Helper()
	m := &Matrix{Profiles: testProfiles(t, "5:1000"), Losses: []float64{0}, CCs: []string{MatchedCC},
		Arms: []measure.Arm{"tcp", "quic"}, Repeats: 1, Workdir: dir}
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
		release, err := offloadMatrix(t, dir, c.had).Claim()
		if err != nil {
			t.Fatal(err)
		}
		release.Release()
		if release, err = offloadMatrix(t, dir, c.asked).Claim(); err == nil {
			release.Release()
		}
		if !errors.Is(err, ErrWorkdir) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("resuming %q with %q: %v, want a refusal saying %q", c.had, c.asked, err, c.want)
		}
		if release, err = offloadMatrix(t, dir, c.had).Claim(); err != nil {
			t.Errorf("resuming %q with %q: %v", c.had, c.had, err)
		} else {
			release.Release()
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
	release, err := m.Claim()
	if err != nil {
		t.Fatalf("resuming a record from before -offload as wire: %v", err)
	}
	release.Release()
	m.Link.Offload = shapedlink.OffloadKeep
	if release, err = m.Claim(); err == nil {
		release.Release()
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
	m.Remote = "198.18.0.2:7390"
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

// TestEmulatorSettingsRecorded: matrix.json records the emulator's
// departure window and keep-awake as asked, so a work directory is
// resumed with the same settings.
func TestEmulatorSettingsRecorded(t *testing.T) {
	m := shardMatrix(t, []string{"80:10"}, []float64{0}, []string{MatchedCC}, allArms[:2], 1)
	m.Link.EmulatorDepartureWindow = 200 * time.Microsecond
	rec, _ := json.Marshal(m.record())
	if !strings.Contains(string(rec), `"departure_window_ns":200000`) || strings.Contains(string(rec), "keep_awake") {
		t.Errorf("matrix.json %s; want the 200us window recorded and no keep_awake", rec)
	}
	off := *m
	off.Link.EmulatorKeepAwake, off.Link.EmulatorDepartureWindow = true, 0
	if diff := diffRecords(m.record(), off.record()); len(diff) != 2 {
		t.Errorf("keep-awake and no window: differences %v; want both named", diff)
	}
}

// TestRemoteRecord: matrix.json records the daemon's address (a matrix
// holds no secret) and no emulator settings.
func TestRemoteRecord(t *testing.T) {
	m := &Matrix{CCs: []string{MatchedCC}, Arms: allArms[:2], Repeats: 2, Remote: "server.example:7390"}
	rec, _ := json.Marshal(m.record())
	if !strings.Contains(string(rec), `"remote":"server.example:7390"`) || strings.Contains(string(rec), "keep_awake") {
		t.Errorf("matrix.json: %s; want the daemon's address and neither the secret nor the emulator's settings", rec)
	}
}
