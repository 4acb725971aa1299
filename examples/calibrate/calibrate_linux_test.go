package main

import (
	"encoding/json"
	"math"
	"os/exec"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/examples/internal/cmdtest"
	"github.com/shakenfist/quicbench/shapedlink/calibrate"
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
	var rep calibrate.Report
	if err := json.Unmarshal([]byte(c.Stdout), &rep); err != nil {
		t.Fatalf("stdout is not a JSON report (%v):\n%s\nstderr:\n%s", err, c.Stdout, c.Stderr)
	}
	if b := rep.Build; b.Module == "" || b.Commit == "" && b.CommitMissing == "" {
		t.Errorf("the report does not say which code made it (a commit, or why there is none): %+v", b)
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
	for name, p := range map[string]*calibrate.Probe{"ping": r.Ping, "bare ping": r.Bare} {
		if p == nil || p.Error != "" || p.Answered == 0 {
			t.Errorf("%s: %+v: the idle round trip was not measured", name, p)
		} else if p.MinErrMs < -0.05 {
			t.Errorf("%s: a round trip %.3f ms shorter than expected: the expectation or the timestamps are wrong", name, p.MinErrMs)
		}
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

// TestIperf3Mode runs the iperf3 series at one rate in each offload
// mode: the bare pair with its offloads on and wire-sized, the unlimited
// link and a 10 Mbit/s link each carry one iperf3 flow; the shaped flows
// are in the run's mode, the 10 Mbit/s flow's wire share, counted by the
// emulator, is near the rate (80%: a busy host can only take away) and
// never above it, and the emulator's CPU per GB is reported. Keeping offloads, TCP's super-packets reach the
// shaper; wire-sized, none do.
func TestIperf3Mode(t *testing.T) {
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Skip("iperf3 is not installed (apt-get install iperf3; .ci/run installs it)")
	}
	for _, mode := range []string{"wire", "keep"} {
		t.Run(mode, func(t *testing.T) {
			c := cmdtest.Run(t, 0, cmdtest.OpenDir(t, 0), "-json", "-profiles", "", "-sweep", "", "-iperf3", "10", "-bulk", "3s", "-offload", mode)
			if c.Code != 0 {
				t.Fatalf("exit code %d, want 0; stderr:\n%s", c.Code, c.Stderr)
			}
			var rep calibrate.Report
			if err := json.Unmarshal([]byte(c.Stdout), &rep); err != nil {
				t.Fatalf("stdout is not a JSON report (%v):\n%s", err, c.Stdout)
			}
			if rep.Offload != mode {
				t.Errorf("the report records offload %q, want %q", rep.Offload, mode)
			}
			if len(rep.Iperf) != 4 {
				t.Fatalf("%d iperf3 flows, want 4 (bare with offloads on, bare wire-sized, unlimited, 10 Mbit/s): %+v", len(rep.Iperf), rep.Iperf)
			}
			for i, want := range []struct{ label, backend, offload string }{
				{"bare veth, offloads on", "none", "keep"}, {"bare veth, wire-sized", "none", "wire"}, {"unlimited", "emulator", mode}, {"5:10", "emulator", mode},
			} {
				f := rep.Iperf[i]
				if f.Error != "" || f.Mbit <= 0 || f.Label != want.label || f.Backend != want.backend || f.Offload != want.offload {
					t.Errorf("flow %d: %s over %s, offload %s: %.2f Mbit/s, error %q; want %s over %s, offload %s", i, f.Label, f.Backend, f.Offload, f.Mbit, f.Error, want.label, want.backend, want.offload)
				}
			}
			if f := rep.Iperf[3]; f.WireFrom != "shaper" || f.WirePct < 80 || f.WirePct > 100.5 || f.CPUNsPerFrame <= 0 || f.CPUSecPerGB <= 0 {
				t.Errorf("10 Mbit/s: wire %.1f%% (from %q), emulator CPU %.0f ns/frame and %.2f s/GB; want 80-100.5%% counted by the shaper and both CPU figures", f.WirePct, f.WireFrom, f.CPUNsPerFrame, f.CPUSecPerGB)
			}
			u := rep.Iperf[2]
			t.Logf("%s: unlimited %.0f Mbit/s, %.2f emulator CPU s/GB, super-packets in %d out %d", mode, u.Mbit, u.CPUSecPerGB, u.SuperPacketsIn, u.SuperPacketsOut)
			if got := u.SuperPacketsIn > 0; got != (mode == "keep") {
				t.Errorf("%s: %d super-packets reached the shaper on the unlimited link", mode, u.SuperPacketsIn)
			}
		})
	}
}

// TestQdiscMode: -qdisc measures each discipline under a Cubic flow with
// echoes beside it and reports the standing queue and the sparse flow's
// wait; under FQ-CoDel the sparse flow is spared at least half of the
// standing queue it waits behind under drop-tail in the same run (its own
// queue, not the flow's), and the discipline shows in the applied line.
func TestQdiscMode(t *testing.T) {
	c := cmdtest.Run(t, 0, cmdtest.OpenDir(t, 0), "-json", "-profiles", "", "-sweep", "", "-qdisc", "fifo fq_codel", "-qdisc-profile", "40:10", "-bulk", "3s")
	cmdtest.SkipIfNoUserNS(t, c)
	if c.Code != 0 {
		t.Fatalf("exit code %d, want 0; stderr:\n%s", c.Code, c.Stderr)
	}
	var rep calibrate.Report
	if err := json.Unmarshal([]byte(c.Stdout), &rep); err != nil {
		t.Fatalf("stdout is not a JSON report (%v):\n%s", err, c.Stdout)
	}
	if len(rep.Qdisc) != 2 {
		t.Fatalf("%d disciplines measured, want 2: %+v", len(rep.Qdisc), rep.Qdisc)
	}
	for _, q := range rep.Qdisc {
		if q.Error != "" || q.Samples < 50 || q.Echoes < 50 || q.FlowMbit < 5 {
			t.Errorf("%s: error %q, %d samples, %d echoes, flow %.2f Mbit/s", q.Discipline, q.Error, q.Samples, q.Echoes, q.FlowMbit)
		}
	}
	fifo, fq := rep.Qdisc[0], rep.Qdisc[1]
	t.Logf("sparse flow +%.3f ms at p50 behind fq_codel, +%.3f ms behind drop-tail, whose standing queue the shaper sampled at %.3f ms", fq.SparseP50Ms, fifo.SparseP50Ms, fifo.StandingP50Ms)
	// Against drop-tail in the same run, not an absolute bound: a loaded
	// host's late wake-ups add to both sparse waits alike, and the shaper
	// samples drop-tail's standing queue itself.
	if !strings.Contains(strings.Join(fq.Applied, " "), "qdisc fq_codel") || fq.SparseP50Ms > fifo.SparseP50Ms-fifo.StandingP50Ms/2 {
		t.Errorf("fq_codel: applied %q, sparse flow +%.3f ms at p50 against +%.3f ms behind drop-tail with a %.3f ms standing queue; want the discipline applied and the sparse flow spared at least half that queue",
			fq.Applied, fq.SparseP50Ms, fifo.SparseP50Ms, fifo.StandingP50Ms)
	}
}

// TestDupReorderCalibration: calibrate measures duplication and
// reordering on profiles that have them and finds the configured shares
// inside its intervals, and the loss it expects once duplication hides
// part of it (a duplicated datagram that is lost still goes through once).
func TestDupReorderCalibration(t *testing.T) {
	c := cmdtest.Run(t, 0, cmdtest.OpenDir(t, 0), "-json", "-profiles", "20:10:2,down.dup=10 20:10,down.reorder=20/0/2", "-echoes", "20", "-bulk", "600ms", "-losspkts", "3000", "-sweep", "")
	cmdtest.SkipIfNoUserNS(t, c)
	var rep calibrate.Report
	if err := json.Unmarshal([]byte(c.Stdout), &rep); err != nil || len(rep.Results) != 2 {
		t.Fatalf("stdout is not a two-profile report (%v):\n%s\nstderr:\n%s", err, c.Stdout, c.Stderr)
	}
	d, r := rep.Results[0], rep.Results[1]
	t.Logf("%s: dup %.2f%% [%.2f,%.2f] of %.0f%%; loss %.2f%% [%.2f,%.2f], %d shaper drops", d.Profile, d.DupPct, d.DupLoPct, d.DupHiPct, d.DupWantPct, d.LossPct, d.LossLoPct, d.LossHiPct, d.LossShaperDrops)
	t.Logf("%s: early %.2f%% [%.2f,%.2f] of %.3g%%", r.Profile, r.ReorderPct, r.ReorderLoPct, r.ReorderHiPct, r.ReorderWantPct)
	if d.DupWantPct != 10 || d.DupWantPct < d.DupLoPct || d.DupWantPct > d.DupHiPct || d.ReorderWantPct != 0 {
		t.Errorf("duplication: configured %v%% outside the measured [%.2f, %.2f]", d.DupWantPct, d.DupLoPct, d.DupHiPct)
	}
	if !d.LossInside {
		t.Errorf("loss %.2f%% [%.2f, %.2f] does not hold 2%% less what duplication hides (1.8%%)", d.LossPct, d.LossLoPct, d.LossHiPct)
	}
	// reorder 20% with gap 2: one packet in 1 + 5.
	if math.Abs(r.ReorderWantPct-100.0/6) > 1e-9 || r.ReorderWantPct < r.ReorderLoPct || r.ReorderWantPct > r.ReorderHiPct || r.DupWantPct != 0 {
		t.Errorf("reordering: configured %v%% outside the measured [%.2f, %.2f]", r.ReorderWantPct, r.ReorderLoPct, r.ReorderHiPct)
	}
}

// TestCorruptCalibration: calibrate measures corruption as the share of
// the loss run's datagrams the receiver's checks drop, beside what 5%
// corruption should make them drop (all flips but those in the Ethernet
// header, which no checksum covers), and says none arrived changed; the
// loss it reports holds what corruption loses.
func TestCorruptCalibration(t *testing.T) {
	c := cmdtest.Run(t, 0, cmdtest.OpenDir(t, 0), "-json", "-profiles", "20:10,down.corrupt=5", "-echoes", "20", "-bulk", "600ms", "-losspkts", "4000", "-sweep", "")
	cmdtest.SkipIfNoUserNS(t, c)
	var rep calibrate.Report
	if err := json.Unmarshal([]byte(c.Stdout), &rep); err != nil || len(rep.Results) != 1 {
		t.Fatalf("stdout is not a one-profile report (%v):\n%s\nstderr:\n%s", err, c.Stdout, c.Stderr)
	}
	r := rep.Results[0]
	t.Logf("%s: caught %.2f%% [%.2f,%.2f] of %.3g%%, %d changed; loss %.2f%% [%.2f,%.2f]", r.Profile, r.CorruptCaughtPct, r.CorruptCaughtLoPct, r.CorruptCaughtHiPct, r.CorruptWantPct, r.CorruptArrived, r.LossPct, r.LossLoPct, r.LossHiPct)
	// The loss run's 106-byte frames: the receiver's checks cover all but
	// the 14-byte Ethernet header.
	if want := 5 * float64(106-14) / 106; math.Abs(r.CorruptWantPct-want) > 1e-9 || want < r.CorruptCaughtLoPct || want > r.CorruptCaughtHiPct {
		t.Errorf("corruption: expected %.3g%% caught, outside the measured [%.2f, %.2f]", want, r.CorruptCaughtLoPct, r.CorruptCaughtHiPct)
	}
	if r.CorruptArrived != 0 {
		t.Errorf("%d datagrams arrived changed; the receiver's checks drop every corrupted one", r.CorruptArrived)
	}
	if !r.LossInside {
		t.Errorf("loss %.2f%% [%.2f, %.2f] does not hold what 5%% corruption loses", r.LossPct, r.LossLoPct, r.LossHiPct)
	}
}

// A refused command line exits 2 with one line that says "calibrate:"
// once, whether the command's own checks or the Config's refuse it.
func TestRefusedCommandLinesExit2(t *testing.T) {
	for _, args := range [][]string{
		{"-profiles", "", "-sweep", "", "-iperf3", ""},
		{"-profiles", "80:10", "-interval", "5s"},
	} {
		c := cmdtest.Run(t, 0, cmdtest.OpenDir(t, 0), args...)
		if c.Code != 2 {
			t.Errorf("%q: exit code %d, want 2", args, c.Code)
		}
		if strings.Count(c.Stderr, "calibrate:") != 1 {
			t.Errorf("%q: want one line saying calibrate: once, got:\n%s", args, c.Stderr)
		}
	}
}
