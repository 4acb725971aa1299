package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/examples/internal/cmdtest"
	"github.com/shakenfist/quicbench/measure/fallback"
)

// The runs re-execute the test binary as their server and client.
// Started by cmdtest.Run, the test binary is the command itself.
func TestMain(m *testing.M) {
	fallback.MaybeRunRole()
	cmdtest.Main(m, main)
}

// A short run: every arm, two connects each over a 20 ms link; a few
// seconds.
func shortRun(workdir string) []string {
	return []string{"-profiles", "20:10", "-connects", "2", "-gap", "100ms", "-give-up", "300ms", "-workdir", workdir}
}

// TestUnprivilegedRun runs fallback as nobody: it must re-execute itself
// into a user namespace of its own (where nftables blocks UDP for the
// blocked arm), measure every arm, and exit 0.
func TestUnprivilegedRun(t *testing.T) {
	cmdtest.NeedUnprivileged(t)
	dir := cmdtest.OpenDir(t, cmdtest.Nobody)
	workdir := filepath.Join(dir, "results")
	c := cmdtest.Run(t, cmdtest.Nobody, dir, shortRun(workdir)...)
	cmdtest.SkipIfNoUserNS(t, c)
	if c.Code != 0 {
		t.Errorf("exit code %d, want 0; stderr:\n%s", c.Code, c.Stderr)
	}
	recs, err := fallback.Load(workdir)
	if err != nil {
		t.Fatalf("%v; stderr:\n%s", err, c.Stderr)
	}
	if len(recs) != len(fallback.Arms()) {
		t.Fatalf("%d records, want %d", len(recs), len(fallback.Arms()))
	}
	for _, r := range recs {
		if r.Failed != "" {
			t.Errorf("%s failed: %s", r.Arm, r.Failed)
		}
		ok := 0
		for _, c := range r.Results {
			if c.Err == "" {
				ok++
			}
		}
		if ok != 2 {
			t.Errorf("%s: %d connects ok, want 2", r.Arm, ok)
		}
	}
}

// TestFailedArmsExitNonZero runs fallback with -backend netem on a kernel
// without netem: no arm can be measured, and the command must say so and
// exit 1.
func TestFailedArmsExitNonZero(t *testing.T) {
	cmdtest.NeedNoNetem(t)
	dir := cmdtest.OpenDir(t, 0)
	c := cmdtest.Run(t, 0, dir, append([]string{"-backend", "netem", "-arms", "tcp"}, shortRun(filepath.Join(dir, "results"))...)...)
	if c.Code != 1 {
		t.Errorf("exit code %d, want 1; stderr:\n%s", c.Code, c.Stderr)
	}
	if !strings.Contains(c.Stderr, "2 of 2 measurements (connects) failed") {
		t.Errorf("stderr does not say how many measurements failed:\n%s", c.Stderr)
	}
	if !strings.Contains(c.Stdout, "| 20:10 | tcp | failed |") {
		t.Errorf("the summary does not show the failed arm:\n%s", c.Stdout)
	}
}
