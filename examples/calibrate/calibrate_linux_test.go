package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/examples/internal/cmdtest"
)

func TestMain(m *testing.M) { cmdtest.Main(m, main) }

// A short calibration: one profile, 20 echoes, two 600 ms bulk flows, 200
// datagrams for the loss figure and no sweep; a few seconds.
var shortRun = []string{"-profiles", "20:10", "-echoes", "20", "-bulk", "600ms", "-losspkts", "200", "-sweep", ""}

// TestUnprivilegedRun runs calibrate as nobody: it must re-execute itself
// into a user namespace of its own, measure the profile, and exit 0.
func TestUnprivilegedRun(t *testing.T) {
	cmdtest.NeedUnprivileged(t)
	dir := cmdtest.OpenDir(t, cmdtest.Nobody)
	c := cmdtest.Run(t, cmdtest.Nobody, dir, append([]string{"-json"}, shortRun...)...)
	cmdtest.SkipIfNoUserNS(t, c)
	if c.Code != 0 {
		t.Errorf("exit code %d, want 0; stderr:\n%s", c.Code, c.Stderr)
	}
	var rep Report
	if err := json.Unmarshal([]byte(c.Stdout), &rep); err != nil {
		t.Fatalf("stdout is not a JSON report (%v):\n%s\nstderr:\n%s", err, c.Stdout, c.Stderr)
	}
	if len(rep.Results) != 1 {
		t.Fatalf("%d results, want 1", len(rep.Results))
	}
	r := rep.Results[0]
	if r.Error != "" {
		t.Errorf("profile %s failed: %s", r.Profile, r.Error)
	}
	if r.Backend == "" || r.Answered == 0 {
		t.Errorf("backend %q, %d of %d echoes answered: nothing was measured", r.Backend, r.Answered, r.Echoes)
	}
	if len(r.Bulk) != 2 {
		t.Fatalf("%d bulk flows, want 2", len(r.Bulk))
	}
	for _, b := range r.Bulk {
		if b.Error != "" || b.GoodputMbit <= 0 {
			t.Errorf("bulk %s: goodput %.2f Mbit/s, error %q", b.CC, b.GoodputMbit, b.Error)
		}
		t.Logf("bulk %s buffers %s goodput %.2f Mbit/s", b.CC, b.Buffers, b.GoodputMbit)
	}
}

// TestFailedMeasurementsExitNonZero calibrates with -backend netem on a
// kernel without netem: the profile cannot be measured, and the command
// must say so and exit 1.
func TestFailedMeasurementsExitNonZero(t *testing.T) {
	cmdtest.NeedNoNetem(t)
	c := cmdtest.Run(t, 0, cmdtest.OpenDir(t, 0), append([]string{"-backend", "netem"}, shortRun...)...)
	if c.Code != 1 {
		t.Errorf("exit code %d, want 1", c.Code)
	}
	if !strings.Contains(c.Stderr, "1 of 1 measurements failed") {
		t.Errorf("stderr does not say how many measurements failed:\n%s", c.Stderr)
	}
	if !strings.Contains(c.Stdout, "sch_netem") {
		t.Errorf("the table does not carry the profile's error:\n%s", c.Stdout)
	}
}
