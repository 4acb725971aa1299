package main

import (
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/examples/internal/cmdtest"
	"github.com/shakenfist/quicbench/measure/pathchange"
	"github.com/shakenfist/quicbench/measure/results"
)

// The runs re-execute the test binary as their server and client.
// Started by cmdtest.Run, the test binary is the command itself.
func TestMain(m *testing.M) {
	pathchange.MaybeRunRole()
	cmdtest.Main(m, main)
}

// A short run: one QUIC run of 4 s moved at 2 s; about 10 s.
func shortRun(workdir string) []string {
	return []string{"-profile", "20:10", "-losses", "0", "-arms", "quic", "-repeats", "1",
		"-duration", "4s", "-warmup", "1s", "-change-at", "2s", "-timeout", "1s", "-probe-timeout", "2s",
		"-linger", "1s", "-workdir", workdir}
}

// records reads every pathchange record under workdir.
func records(t *testing.T, workdir string) []pathchange.Record {
	t.Helper()
	var out []pathchange.Record
	err := filepath.WalkDir(workdir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "pathchange.json" {
			return err
		}
		var r pathchange.Record
		if err := results.ReadJSON(p, &r); err != nil {
			return err
		}
		out = append(out, r)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestUnprivilegedRun runs pathchange as nobody: it must re-execute itself
// into a user namespace of its own, measure the path change, and exit 0.
func TestUnprivilegedRun(t *testing.T) {
	cmdtest.NeedUnprivileged(t)
	dir := cmdtest.OpenDir(t, cmdtest.Nobody)
	workdir := filepath.Join(dir, "results")
	c := cmdtest.Run(t, cmdtest.Nobody, dir, shortRun(workdir)...)
	cmdtest.SkipIfNoUserNS(t, c)
	if c.Code != 0 {
		t.Errorf("exit code %d, want 0; stderr:\n%s", c.Code, c.Stderr)
	}
	recs := records(t, workdir)
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1; stderr:\n%s", len(recs), c.Stderr)
	}
	if r := recs[0]; r.Failed != "" || !r.ChangeSeen {
		t.Errorf("failed %q, change seen %v: the run did not measure a path change; stderr:\n%s", r.Failed, r.ChangeSeen, c.Stderr)
	}
	if !strings.Contains(c.Stdout, "| make-first | 0% | quic |") {
		t.Errorf("no summary row on stdout:\n%s", c.Stdout)
	}
}

// TestFailedRunsExitNonZero runs pathchange with -backend netem on a
// kernel without netem: no run can be measured, and the command must say
// so and exit 1.
func TestFailedRunsExitNonZero(t *testing.T) {
	cmdtest.NeedNoNetem(t)
	dir := cmdtest.OpenDir(t, 0)
	c := cmdtest.Run(t, 0, dir, append([]string{"-backend", "netem"}, shortRun(filepath.Join(dir, "results"))...)...)
	if c.Code != 1 {
		t.Errorf("exit code %d, want 1; stderr:\n%s", c.Code, c.Stderr)
	}
	if !strings.Contains(c.Stderr, "1 of 1 measurements failed") {
		t.Errorf("stderr does not say how many measurements failed:\n%s", c.Stderr)
	}
	if recs := records(t, filepath.Join(dir, "results")); len(recs) != 1 || !strings.Contains(recs[0].Failed, "sch_netem") {
		t.Errorf("records %+v: want one, failed for want of netem", recs)
	}
}
