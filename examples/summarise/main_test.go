package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/report/reporttest"
)

func seedDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := reporttest.Write(dir, reporttest.Seed()); err != nil {
		t.Fatal(err)
	}
	return dir
}

func runCmd(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), err
}

func TestMarkdownFromAResultsDirectory(t *testing.T) {
	out, _, err := runCmd(t, seedDir(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| 80 ms / 10 Mbit | 0% | -4.8 | 1.2 | QUIC better |",
		"| 80 ms / 10 Mbit | 1% | +61.6 | 0.9 | QUIC worse |",
		"| 80 ms / 10 Mbit | 2% | +75.0 | 300.5 | unresolved |",
		"## Warnings",
		"None:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
}

func TestJSONAndPlots(t *testing.T) {
	plots := filepath.Join(t.TempDir(), "plots")
	out, stderr, err := runCmd(t, "-json", "-plots", plots, seedDir(t))
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("-json output does not decode: %v\n%s", err, out)
	}
	if len(rep.Cells) != 4 || rep.Cells[1].Comparisons[0].Reading != "QUIC worse" {
		t.Errorf("decoded %d cells; 1%% reading %+v", len(rep.Cells), rep.Cells[1].Comparisons)
	}
	ents, err := os.ReadDir(plots)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 25 || !strings.Contains(stderr, "wrote 25 plot files") {
		t.Errorf("%d entries in the plot directory; stderr %q", len(ents), stderr)
	}
	for _, e := range ents {
		if info, err := e.Info(); err != nil || info.Size() == 0 {
			t.Errorf("%s is empty or unreadable (%v)", e.Name(), err)
		}
	}
}

func TestWarmupFlag(t *testing.T) {
	dir := seedDir(t)
	out, _, err := runCmd(t, "-json", "-warmup", "0s", dir)
	if err != nil {
		t.Fatal(err)
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.WarmupOverridden || rep.Cells[0].Arms[0].P99Ms != float64(reporttest.WarmupRTT.Milliseconds()) {
		t.Errorf("-warmup 0s: overridden %v, tcp p99 %v ms", rep.WarmupOverridden, rep.Cells[0].Arms[0].P99Ms)
	}
	if _, _, err := runCmd(t, "-warmup", "-1s", dir); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("negative -warmup: %v", err)
	}
}

func TestBadDirectories(t *testing.T) {
	empty := t.TempDir()
	file := filepath.Join(empty, "x")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"missing":   {[]string{filepath.Join(empty, "nope")}, "does not exist"},
		"empty":     {[]string{empty}, "no run.json"},
		"file":      {[]string{file}, "not a directory"},
		"no args":   {nil, "need a results directory"},
		"two args":  {[]string{empty, empty}, "is given twice"},
		"no record": {[]string{seedDir(t), seedDir(t)}, "has no matrix.json"},
		"bad flags": {[]string{"-bogus", empty}, "bogus"},
	} {
		_, _, err := runCmd(t, tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one containing %q", name, err, tc.want)
		}
	}
}
