package plan

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
)

// nestedLoopPlan is fullPlan as it was before the matrix became a list of
// axes: one nested loop per built-in axis. It is kept here as the
// reference every plan must still match, so that the work directories
// written before read, resume and merge as they did.
func nestedLoopPlan(m *Matrix) []Run {
	var plan []Run
	sessions := m.Sessions
	if len(sessions) == 0 {
		sessions = []int{0}
	}
	caps := m.BulkCapFractions
	if len(caps) == 0 {
		caps = []float64{0}
	}
	profiles, allLosses := m.Profiles, m.Losses
	if m.Remote != "" {
		profiles, allLosses = []shapedlink.Profile{{}}, []float64{0}
	}
	for _, p := range profiles {
		losses, own := allLosses, p.HasLoss()
		if own {
			losses = []float64{ownLoss(p)}
		}
		for _, cc := range m.CCs {
			for _, loss := range losses {
				for _, n := range sessions {
					for _, capf := range caps {
						lp, name := p.WithLoss(loss), p.WithLoss(0).String()
						if own {
							lp, name = p, p.String()
						}
						cell := results.Cell{
							Profile:     name,
							RTTms:       float64(p.RoundTrip()) / float64(time.Millisecond),
							RateMbit:    p.RateMbit,
							LossPct:     loss,
							CC:          cc,
							Sensitivity: cc != MatchedCC,
							Sessions:    n,
						}
						if m.Remote != "" {
							cell.Profile, cell.RTTms, cell.RateMbit = results.PathProfile, 0, 0
						}
						w := m.Workload
						if capf != 0 {
							cell.BulkCapFraction = capf
							cell.BulkRateCapBps = bulkCap(p.RateMbit, capf)
							w.BulkRateCap = cell.BulkRateCapBps
						}
						for r := 1; r <= m.Repeats; r++ {
							for _, arm := range m.Arms {
								plan = append(plan, Run{
									Cell: cell, Profile: lp, Arm: arm, Repeat: r,
									Workload: w, Workdir: m.Workdir, Link: m.Link,
									Qlog: m.Qlog, Sessions: n,
								})
							}
						}
					}
				}
			}
		}
	}
	return plan
}

// nestedLoopSize is size as it was before the axes.
func nestedLoopSize(m *Matrix) int {
	n, profiles, losses := 1, len(m.Profiles), len(m.Losses)
	if m.Remote != "" {
		profiles, losses = 1, 1
	}
	for _, k := range []int{profiles, losses, len(m.CCs), len(m.Arms), m.Repeats,
		max(1, len(m.Sessions)), max(1, len(m.BulkCapFractions))} {
		if k > 0 && n > maxRuns/k {
			return maxRuns + 1
		}
		n *= k
	}
	return n
}

// planTestMatrices are the shard tests' matrices and more: every built-in
// axis at once, own-loss profiles with caps and sessions, two hosts with
// and without sessions, and matrices with an axis left empty.
func planTestMatrices(t *testing.T) map[string]*Matrix {
	t.Helper()
	ms := shardTestMatrices(t)
	all := shardMatrix(t, []string{"80:10@200,qdisc=fq_codel", "150:2", "80:10,loss=ge:0.3367/33.33", "80:10,down.loss=2,up.loss=1/25"},
		[]float64{0, 1, 2.5}, []string{MatchedCC, "cubic", "bbr"}, allArms, 3)
	all.Sessions, all.BulkCapFractions, all.Qlog = []int{1, 2, 4}, []float64{0, 0.5, 0.8}, true
	all.Link = shapedlink.Options{Backend: shapedlink.BackendEmulator, Seed: 7, Offload: shapedlink.OffloadKeep}
	ms["every axis"] = all
	capsOwn := shardMatrix(t, []string{"80:10,loss=ge:0.3367/33.33", "20:100"}, []float64{1}, []string{"cubic"}, allArms[1:3], 2)
	capsOwn.BulkCapFractions = []float64{0.8, 0}
	ms["caps, own loss, no reno"] = capsOwn
	remote := shardMatrix(t, nil, nil, []string{MatchedCC, "cubic"}, allArms[:2], 3)
	remote.Remote = "198.18.0.2:7000"
	ms["two hosts"] = remote
	remoteS := shardMatrix(t, nil, nil, []string{MatchedCC}, allArms[:2], 2)
	remoteS.Remote, remoteS.Sessions = "198.18.0.2:7000", []int{2, 1}
	ms["two hosts, sessions"] = remoteS
	ms["no arms"] = shardMatrix(t, []string{"80:10"}, []float64{1}, []string{MatchedCC}, nil, 2)
	ms["no repeats"] = shardMatrix(t, []string{"80:10"}, []float64{1}, []string{MatchedCC}, allArms[:2], 0)
	ms["no profiles"] = shardMatrix(t, nil, []float64{1}, []string{MatchedCC}, allArms[:2], 2)
	return ms
}

// TestPlanMatchesNestedLoops: for every test matrix, the plan built from
// the list of axes is the nested loops' plan, run for run (directory,
// order and every setting), and so is each shard's share and the size.
func TestPlanMatchesNestedLoops(t *testing.T) {
	for name, m := range planTestMatrices(t) {
		got, want := m.fullPlan(), nestedLoopPlan(m)
		if gk, wk := planKeys(got), planKeys(want); !slices.Equal(gk, wk) {
			i := 0
			for i < min(len(gk), len(wk)) && gk[i] == wk[i] {
				i++
			}
			t.Errorf("%s: the axes plan %d runs, the nested loops %d; they part at run %d: %q against %q",
				name, len(gk), len(wk), i, gk[i:min(len(gk), i+1)], wk[i:min(len(wk), i+1)])
			continue
		}
		if !reflect.DeepEqual(got, want) {
			for i := range got {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Errorf("%s: run %d (%s) is\n%+v\nthe nested loops made\n%+v", name, i, planKey(got[i]), got[i], want[i])
					break
				}
			}
		}
		if s, w := m.size(), nestedLoopSize(m); s != w {
			t.Errorf("%s: size %d, the nested loops' %d", name, s, w)
		}
		for _, n := range []int{2, 3, 5} {
			s := *m
			s.Shard = Shard{1, n}
			if !reflect.DeepEqual(s.Plan(), s.Shard.share(want)) {
				t.Errorf("%s: shard 1/%d's share differs from the nested loops'", name, n)
			}
		}
	}
}

// TestRecordsWithoutAxesUnchanged: a matrix without axes of its own
// records no "axes" in matrix.json or in a cell, so every record written
// before reads, compares and resumes as it did.
func TestRecordsWithoutAxesUnchanged(t *testing.T) {
	for name, m := range planTestMatrices(t) {
		b, _ := json.Marshal(m.record())
		if strings.Contains(string(b), `"axes"`) {
			t.Errorf("%s: matrix.json names axes: %s", name, b)
		}
		for _, rc := range m.fullPlan() {
			if b, _ := json.Marshal(rc.Cell); strings.Contains(string(b), "axes") {
				t.Errorf("%s: a cell names axes: %s", name, b)
				break
			}
		}
	}
}

// TestOwnAxis: an axis of a command's own, from its flag to the summary:
// its values are cells named apart (directory and title), set what they
// set in each run, are recorded in matrix.json (a resume with other
// values is refused), and merge and summarise like the built-in axes.
func TestOwnAxis(t *testing.T) {
	m, err := gapMatrix(t, "20ms", "5ms")
	if err != nil {
		t.Fatal(err)
	}
	plan := m.fullPlan()
	if len(plan) != 2*2*2*2 {
		t.Fatalf("%d runs, want 16", len(plan))
	}
	if k := planKey(plan[0]); k != "80ms-10mbit_loss0_reno_gap-20ms/tcp/r1" {
		t.Errorf("first run %s", k)
	}
	if k := planKey(plan[4]); k != "80ms-10mbit_loss0_reno_gap-5ms/tcp/r1" {
		t.Errorf("fifth run %s", k)
	}
	for _, rc := range plan {
		_, v, _ := strings.Cut(rc.Cell.Axes, "gap=")
		if d, _ := time.ParseDuration(v); rc.Workload.EchoGap != d {
			t.Errorf("%s: echo gap %v", planKey(rc), rc.Workload.EchoGap)
		}
		for _, f := range strings.Fields(rc.Cell.Axes) {
			name, value, _ := strings.Cut(f, "=")
			if err := results.CheckAxis(name, value); err != nil {
				t.Errorf("%s: %v", planKey(rc), err)
			}
		}
	}
	if got := report.CellTitle(plan[4].Cell); got != "80 ms / 10 Mbit, gap 5ms" {
		t.Errorf("title %q", got)
	}

	// matrix.json records the axis; a resume with other values is refused.
	m.Workdir = t.TempDir()
	claimed, err := m.Claim()
	if err != nil {
		t.Fatal(err)
	}
	claimed.Release()
	b, _ := os.ReadFile(filepath.Join(m.Workdir, matrixFile))
	if !strings.Contains(string(b), `"axes": [`) || !strings.Contains(string(b), `"name": "gap"`) {
		t.Errorf("matrix.json does not record the axis:\n%s", b)
	}
	other, err := gapMatrix(t, "20ms")
	if err != nil {
		t.Fatal(err)
	}
	other.Workdir = m.Workdir
	if _, err := other.Claim(); !errors.Is(err, ErrWorkdir) || !strings.Contains(err.Error(), "axes:") {
		t.Errorf("resuming with other gaps: %v", err)
	}
	if claimed, err = m.Claim(); err != nil {
		t.Errorf("resuming with the same gaps: %v", err)
	} else {
		claimed.Release()
	}

	// Shards merge, and the merged runs summarise with a cell per gap.
	dirs := writeShards(t, m, 3)
	merged, err := LoadShards(dirs)
	if err != nil {
		t.Fatal(err)
	}
	if !merged.complete() || len(merged.Runs) != len(plan) {
		t.Fatalf("merge: %d runs, complete %v: %s", len(merged.Runs), merged.complete(), merged.Note())
	}
	rep, err := report.Build(merged.Runs, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, c := range rep.Cells {
		titles = append(titles, c.Label())
	}
	want := []string{"80 ms / 10 Mbit, gap 5ms, 0% loss, reno", "80 ms / 10 Mbit, gap 5ms, 1% loss, reno",
		"80 ms / 10 Mbit, gap 20ms, 0% loss, reno", "80 ms / 10 Mbit, gap 20ms, 1% loss, reno"}
	if !slices.Equal(titles, want) {
		t.Errorf("cells %q, want %q", titles, want)
	}
}

// gapMatrix is a matrix of one profile, two losses and two repeats with an
// axis of the test's own, added as a command would add one: the
// interactive channel's gap after each echo.
func gapMatrix(t *testing.T, gaps ...string) (*Matrix, error) {
	t.Helper()
	m := shardMatrix(t, []string{"80:10"}, []float64{0, 1}, []string{MatchedCC}, []measure.Arm{"tcp", "quic"}, 2)
	m.Axes = []Axis{NewAxis("gap", gaps, func(rc *Run, v string) {
		d, _ := time.ParseDuration(v)
		rc.Workload.EchoGap = d
	})}
	return m, m.Validate()
}

// TestArmsCheckedByMatrix: an unknown arm is refused by the matrix, naming
// it, whether it came from -arms (benchcmd's TestArmsFlagChecked) or from
// code.
func TestArmsCheckedByMatrix(t *testing.T) {
	m := shardMatrix(t, []string{"80:10"}, []float64{1}, []string{MatchedCC}, []measure.Arm{"tcp", "sctp"}, 1)
	m.Workdir = "w"
	if err := m.Validate(); err == nil || !strings.Contains(err.Error(), `unknown arm "sctp"`) {
		t.Errorf("a matrix with an unknown arm: %v", err)
	}
	if err := validArm("quic"); err != nil {
		t.Errorf("validArm(quic): %v", err)
	}
}

// TestOwnAxisRefusedFromCode: an axis given from code is refused with a
// clear error when its name or values cannot make cells of their own.
func TestOwnAxisRefusedFromCode(t *testing.T) {
	base := func() *Matrix {
		m := shardMatrix(t, []string{"80:10"}, []float64{1}, []string{MatchedCC}, allArms[:2], 2)
		m.Workdir = "w"
		return m
	}
	for _, c := range []struct {
		axes []Axis
		want string
	}{
		{[]Axis{NewAxis("loss", []string{"1"}, nil)}, `axis "loss" is a built-in axis's name`},
		{[]Axis{NewAxis("Gap", []string{"1"}, nil)}, `axis name "Gap"`},
		{[]Axis{NewAxis("gap", []string{"1"}, nil), NewAxis("gap", []string{"2"}, nil)}, `axis "gap" is given twice`},
		{[]Axis{NewAxis("gap", nil, nil)}, `axis "gap" has no values`},
		{[]Axis{{Name: "gap", Values: []string{"1"}}}, `axis "gap" has no Apply`},
		{[]Axis{{Name: "gap", Values: []string{"1", "2"}, Apply: func(*Run, int) bool { return true }}}, "share the directory"},
	} {
		m := base()
		m.Axes = c.axes
		if err := m.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.want, err, c.want)
		}
	}
}

// TestAllAxesOrder: the built-in axes in plan order, sessions and cap only
// when set, a matrix's own axes before repeat and arm.
func TestAllAxesOrder(t *testing.T) {
	m := shardMatrix(t, []string{"80:10"}, []float64{1}, []string{MatchedCC}, allArms[:2], 2)
	names := func() []string {
		var out []string
		for _, a := range m.AllAxes() {
			out = append(out, a.Name)
		}
		return out
	}
	if got := names(); !slices.Equal(got, []string{"profile", "cc", "loss", "repeat", "arm"}) {
		t.Errorf("headline axes %v", got)
	}
	m.Sessions, m.BulkCapFractions = []int{1}, []float64{0.5}
	m.Axes = []Axis{NewAxis("gap", []string{"20ms"}, nil)}
	if got := names(); !slices.Equal(got, []string{"profile", "cc", "loss", "sessions", "cap", "gap", "repeat", "arm"}) {
		t.Errorf("every axis %v", got)
	}
}
