package main

import (
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/shapedlink"
)

// TestHelpShowsGrammar: -h shows the whole profile grammar, every option
// key on a line of its own, and says where a record goes by default.
func TestHelpShowsGrammar(t *testing.T) {
	var out strings.Builder
	if _, err := parseFlags([]string{"-h"}, &out); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	// When to choose -offload wire, too, in linkflag's words.
	wants := []string{shapedlink.ProfileGrammar, "none by default", "wire-sized queue slots", "offload evidence", "on a small machine below a few hundred Mbit/s", `(default "keep")`}
	for _, k := range shapedlink.OptionKeys() {
		wants = append(wants, "  "+k+"=")
	}
	for _, want := range wants {
		if !strings.Contains(out.String(), want) {
			t.Errorf("-h does not show %q:\n%s", want, out.String())
		}
	}
}

// TestCheckRecordPath: a record path is refused before anything runs when
// the record could not be written there, and accepted where it could, the
// directories that are missing included; the check leaves nothing behind.
func TestCheckRecordPath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{dir, filepath.Join(file, "rec.json"), filepath.Join(file, "sub", "rec.json")} {
		if err := checkRecordPath(path); err == nil || !strings.Contains(err.Error(), "-record "+path) {
			t.Errorf("checkRecordPath(%s) = %v, want an error naming -record and the path", path, err)
		}
	}
	for _, path := range []string{"", file, filepath.Join(dir, "rec.json"), filepath.Join(dir, "new", "sub", "rec.json")} {
		if err := checkRecordPath(path); err != nil {
			t.Errorf("checkRecordPath(%q) = %v, want nil", path, err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 1 {
		t.Errorf("the checks left %v in the directory, want only the file made here", left)
	}
}

// TestQueueNeedsRecord: -queue samples into the record, so without -record
// it is refused rather than silently dropped.
func TestQueueNeedsRecord(t *testing.T) {
	if _, err := parseFlags([]string{"-queue"}, os.Stderr); err == nil || !strings.Contains(err.Error(), "-record") {
		t.Errorf("-queue without -record: %v, want an error naming -record", err)
	}
}

// TestOffloadFlag: -offload defaults to keep, takes wire, and refuses
// anything else naming both choices.
func TestOffloadFlag(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want shapedlink.OffloadMode
	}{{nil, shapedlink.OffloadKeep}, {[]string{"-offload", "keep"}, shapedlink.OffloadKeep}, {[]string{"-offload", "wire"}, shapedlink.OffloadWire}} {
		c, err := parseFlags(append(tc.args, "true"), os.Stderr)
		if err != nil || c.run.Link.Offload != tc.want {
			t.Errorf("%q: offload %q (%v), want %q", tc.args, c.run.Link.Offload, err, tc.want)
		}
	}
	if _, err := parseFlags([]string{"-offload", "on", "true"}, os.Stderr); err == nil || !strings.Contains(err.Error(), `-offload "on" is not an offload mode: use wire`) {
		t.Errorf("-offload on: %v, want an error naming keep and wire", err)
	}
}

// TestLinkFlags: -profile, -backend and -seed are linkflag's, read and
// refused as every command reads and refuses them, all wrong ones in one
// error.
func TestLinkFlags(t *testing.T) {
	c, err := parseFlags([]string{"-profile", "20:5", "-backend", "emulator", "-seed", "9", "true"}, io.Discard)
	if err != nil || c.run.Profile.String() != "20:5" || c.run.Link.Backend != shapedlink.BackendEmulator || c.run.Link.Seed != 9 {
		t.Errorf("-profile 20:5 -backend emulator -seed 9: %v %+v, %v", c.run.Profile, c.run.Link, err)
	}
	_, err = parseFlags([]string{"-profile", "80", "-backend", "tc", "-offload", "on", "true"}, io.Discard)
	for _, want := range []string{`-profile: shapedlink: profile "80"`, `-backend "tc": want netem, emulator or empty`, `-offload "on"`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("-profile 80 -backend tc -offload on: %v, want an error saying %q", err, want)
		}
	}
}

// TestServerPortFlag: -server-port needs -server, and a form it does not
// take is refused naming the flag.
func TestServerPortFlag(t *testing.T) {
	if _, err := parseFlags([]string{"-server-port", "5201", "true"}, new(strings.Builder)); err == nil || !strings.Contains(err.Error(), "give -server too") {
		t.Errorf("-server-port without -server: %v, want a refusal", err)
	}
	if _, err := parseFlags([]string{"-server", "x", "-server-port", "tcp:http", "true"}, new(strings.Builder)); err == nil || !strings.Contains(err.Error(), `-server-port "tcp:http"`) {
		t.Errorf("-server-port tcp:http: %v, want a refusal naming the flag", err)
	}
}
