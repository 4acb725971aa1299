package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/report/reporttest"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
)

// shardMatrix builds a matrix for planning (nothing here runs it).
func shardMatrix(t *testing.T, profiles []string, losses []float64, ccs []string, arms []measure.Arm, repeats int) *Matrix {
	t.Helper()
	m := &Matrix{Losses: losses, CCs: ccs, Arms: arms, Repeats: repeats, Workdir: "w"}
	for _, s := range profiles {
		p, err := shapedlink.ParseProfile(s)
		if err != nil {
			t.Fatal(err)
		}
		m.Profiles = append(m.Profiles, p)
	}
	m.Workload = spicelike.Defaults()
	// As fakeRun records its runs: the merge refuses a run whose duration
	// is not its matrix's.
	m.Workload.Duration, m.Workload.Warmup = 45*time.Second, reporttest.Warmup
	return m
}

var allArms = []measure.Arm{"tcp", "quic", "quic-per-channel", "quic-priority"}

// shardTestMatrices are matrices of 1 and more profiles (one with its own
// loss model), losses, ccs, 1 to 4 arms, 1 to 5 repeats, sessions and caps.
func shardTestMatrices(t *testing.T) map[string]*Matrix {
	t.Helper()
	ms := map[string]*Matrix{
		"one run":         shardMatrix(t, []string{"80:10"}, []float64{1}, []string{MatchedCC}, allArms[:1], 1),
		"headline":        shardMatrix(t, []string{"80:10", "150:2"}, []float64{0, 1, 2}, []string{MatchedCC}, allArms[:2], 5),
		"ccs and 3 arms":  shardMatrix(t, []string{"80:10", "150:2"}, []float64{0, 1}, []string{MatchedCC, "cubic", "bbr"}, allArms[:3], 3),
		"own loss 4 arms": shardMatrix(t, []string{"20:100", "80:10,loss=ge:0.3367/33.33"}, []float64{0, 2}, []string{MatchedCC}, allArms, 2),
	}
	for r := 1; r <= 5; r++ {
		ms[fmt.Sprintf("one cell %d repeats", r)] = shardMatrix(t, []string{"80:10"}, []float64{1}, []string{MatchedCC}, allArms[:2], r)
	}
	s := shardMatrix(t, []string{"80:10"}, []float64{0, 1}, []string{MatchedCC}, allArms[1:], 4)
	s.Sessions = []int{1, 2, 4}
	ms["sessions"] = s
	c := shardMatrix(t, []string{"80:10", "20:100"}, []float64{1}, []string{MatchedCC}, allArms[:2], 3)
	c.BulkCapFractions = []float64{0, 0.5, 0.8}
	ms["caps"] = c
	return ms
}

func planKey(rc Run) string { return runKey(rc.Cell, string(rc.Arm), rc.Repeat) }

// unitIndex numbers the (cell, repeat) units of a full plan, run by run.
func unitIndex(plan []Run) []int {
	out := make([]int, len(plan))
	u := -1
	for i, rc := range plan {
		if i == 0 || rc.Cell != plan[i-1].Cell || rc.Repeat != plan[i-1].Repeat {
			u++
		}
		out[i] = u
	}
	return out
}

// TestShardsPartitionThePlan: for every n from 1 to 7, and n above the
// number of units, the n shards' plans are disjoint and together are the
// unsharded plan exactly; every (cell, repeat) has all its arms in one
// shard, in the unsharded order; unit k goes to shard k mod n; and each
// shard's runs are the unsharded plan's, in its order.
func TestShardsPartitionThePlan(t *testing.T) {
	for name, m := range shardTestMatrices(t) {
		full := m.fullPlan()
		if !reflect.DeepEqual(m.Plan(), full) {
			t.Fatalf("%s: the zero shard's plan is not the full plan", name)
		}
		pos := map[string]int{}
		for i, rc := range full {
			if _, ok := pos[planKey(rc)]; ok {
				t.Fatalf("%s: %s is planned twice", name, planKey(rc))
			}
			pos[planKey(rc)] = i
		}
		unitOf := unitIndex(full)
		nUnits := unitOf[len(unitOf)-1] + 1
		if nUnits*len(m.Arms) != len(full) {
			t.Fatalf("%s: %d units of %d arms for %d runs", name, nUnits, len(m.Arms), len(full))
		}
		counts := []int{1, 2, 3, 4, 5, 6, 7, nUnits + 3}
		for _, n := range counts {
			owner := map[string]int{}
			for i := range n {
				s := *m
				s.Shard = Shard{Index: i, Count: n}
				plan := s.Plan()
				last := -1
				for j, rc := range plan {
					k := planKey(rc)
					p, ok := pos[k]
					if !ok {
						t.Fatalf("%s n=%d: shard %d plans %s, which the full plan does not", name, n, i, k)
					}
					if prev, ok := owner[k]; ok {
						t.Fatalf("%s n=%d: %s is in shards %d and %d", name, n, k, prev, i)
					}
					owner[k] = i
					if p <= last {
						t.Fatalf("%s n=%d: shard %d plans %s out of the full plan's order", name, n, i, k)
					}
					last = p
					if !reflect.DeepEqual(rc, full[p]) {
						t.Fatalf("%s n=%d: shard %d's %s differs from the full plan's: %+v against %+v", name, n, i, k, rc, full[p])
					}
					if want := unitOf[p] % n; want != i {
						t.Fatalf("%s n=%d: %s (unit %d) is in shard %d, want %d", name, n, k, unitOf[p], i, want)
					}
					// Arms of one unit run back to back: the run before
					// is the same unit's previous arm in the full plan,
					// or the unit starts here.
					if j > 0 && unitOf[p] == unitOf[pos[planKey(plan[j-1])]] && pos[planKey(plan[j-1])] != p-1 {
						t.Fatalf("%s n=%d: shard %d splits the arms of %s", name, n, i, k)
					}
				}
				lo, hi := nUnits/n, (nUnits+n-1)/n
				if got := len(plan) / len(m.Arms); got < lo || got > hi || len(plan)%len(m.Arms) != 0 {
					t.Fatalf("%s n=%d: shard %d has %d runs, want %d to %d units of %d arms", name, n, i, len(plan), lo, hi, len(m.Arms))
				}
			}
			if len(owner) != len(full) {
				t.Fatalf("%s n=%d: the shards plan %d runs between them, the full plan %d", name, n, len(owner), len(full))
			}
			// Every unit's arms sit in one shard.
			for p, rc := range full {
				if p > 0 && unitOf[p] == unitOf[p-1] && owner[planKey(rc)] != owner[planKey(full[p-1])] {
					t.Fatalf("%s n=%d: %s and %s, arms of one unit, are in shards %d and %d",
						name, n, planKey(full[p-1]), planKey(rc), owner[planKey(full[p-1])], owner[planKey(rc)])
				}
			}
		}
	}
}

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Shard
		err  string
	}{
		{"0/1", Shard{0, 1}, ""},
		{"3/4", Shard{3, 4}, ""},
		{" 1/2 ", Shard{1, 2}, ""},
		{"999/1000", Shard{999, 1000}, ""},
		{"4/4", Shard{}, "0/4 to 3/4"},
		{"-1/4", Shard{}, "counts from 0"},
		{"1/0", Shard{}, "at least 1"},
		{"0/1001", Shard{}, "at most 1000"},
		{"2", Shard{}, "want i/n"},
		{"", Shard{}, "want i/n"},
		{"a/b", Shard{}, "whole numbers"},
		{"1/2/3", Shard{}, "whole numbers"},
	} {
		got, err := ParseShard(tc.in)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("ParseShard(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("ParseShard(%q) = %v, %v; want an error containing %q", tc.in, got, err, tc.err)
		}
	}
	if !(Shard{}).Whole() || !(Shard{0, 1}).Whole() || (Shard{0, 2}).Whole() {
		t.Error("Whole: want the zero value and 0/1 whole, 0/2 not")
	}
}

// TestShardFromEnvironment: -shard, then SHARD, then JOB_COMPLETION_INDEX
// with SHARDS; the index without the count is an error that says to set
// SHARDS.
func TestShardFromEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want Shard
		err  string
	}{
		{"nothing", nil, nil, Shard{}, ""},
		{"flag", nil, []string{"-shard", "1/3"}, Shard{1, 3}, ""},
		{"SHARD", map[string]string{"SHARD": "2/4"}, nil, Shard{2, 4}, ""},
		{"flag beats SHARD", map[string]string{"SHARD": "2/4"}, []string{"-shard", "1/3"}, Shard{1, 3}, ""},
		{"flag beats a bad SHARD", map[string]string{"SHARD": "x"}, []string{"-shard", "1/3"}, Shard{1, 3}, ""},
		{"flag beats the Job", map[string]string{"JOB_COMPLETION_INDEX": "0"}, []string{"-shard", "1/3"}, Shard{1, 3}, ""},
		{"SHARD beats the Job", map[string]string{"SHARD": "1/2", "JOB_COMPLETION_INDEX": "0", "SHARDS": "4"}, nil, Shard{1, 2}, ""},
		{"Job", map[string]string{"JOB_COMPLETION_INDEX": "3", "SHARDS": "4"}, nil, Shard{3, 4}, ""},
		{"Job without SHARDS", map[string]string{"JOB_COMPLETION_INDEX": "3"}, nil, Shard{}, "set SHARDS to the Job's completions"},
		{"SHARDS without an index", map[string]string{"SHARDS": "4"}, nil, Shard{}, "JOB_COMPLETION_INDEX"},
		{"Job index out of range", map[string]string{"JOB_COMPLETION_INDEX": "4", "SHARDS": "4"}, nil, Shard{}, "0/4 to 3/4"},
		{"Job index not a number", map[string]string{"JOB_COMPLETION_INDEX": "x", "SHARDS": "4"}, nil, Shard{}, "JOB_COMPLETION_INDEX=\"x\""},
		{"SHARDS not a number", map[string]string{"JOB_COMPLETION_INDEX": "1", "SHARDS": "four"}, nil, Shard{}, "SHARDS=\"four\""},
		{"bad SHARD", map[string]string{"SHARD": "4/4"}, nil, Shard{}, "SHARD=\"4/4\""},
		{"bad flag", nil, []string{"-shard", "3"}, Shard{}, "-shard: shard \"3\""},
	} {
		got, err := ResolveShard(flagValue(tc.args), len(tc.args) > 0, func(k string) (string, bool) {
			v, ok := tc.env[k]
			return v, ok
		})
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s: got %v, %v; want %v", tc.name, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%s: got %v, %v; want an error containing %q", tc.name, got, err, tc.err)
		}
	}
}

func flagValue(args []string) string {
	if len(args) == 2 {
		return args[1]
	}
	return ""
}

// TestShardRecord: matrix.json records the shard only when there is one,
// so unsharded records are as before; resuming with another shard is
// refused, naming the field; and the record rebuilds the matrix it came
// from.
func TestShardRecord(t *testing.T) {
	m := shardMatrix(t, []string{"80:10"}, []float64{0, 1}, []string{MatchedCC}, allArms[:2], 2)
	b, err := json.Marshal(m.record())
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "shard") {
		t.Errorf("an unsharded record mentions a shard: %s", b)
	}
	m.Shard = Shard{1, 4}
	if b, _ = json.Marshal(m.record()); !strings.Contains(string(b), `"shard":"1/4"`) {
		t.Errorf("shard 1/4's record: %s", b)
	}

	m.Workdir = t.TempDir()
	m.Shard = Shard{0, 2}
	release, err := m.Claim()
	if err != nil {
		t.Fatal(err)
	}
	release.Release()
	m.Shard = Shard{1, 2}
	if _, err := m.Claim(); !errors.Is(err, ErrWorkdir) || !strings.Contains(err.Error(), `shard: "0/2" there, "1/2" asked`) {
		t.Errorf("resuming shard 0/2's directory as 1/2: %v", err)
	}
	// 0/1 is the whole matrix: it resumes an unsharded directory.
	m.Workdir, m.Shard = t.TempDir(), Shard{}
	if release, err = m.Claim(); err != nil {
		t.Fatal(err)
	}
	release.Release()
	m.Shard = Shard{0, 1}
	if release, err = m.Claim(); err != nil {
		t.Errorf("resuming an unsharded directory as 0/1: %v", err)
	} else {
		release.Release()
	}
}

func TestMatrixRecordRoundTrip(t *testing.T) {
	ms := shardTestMatrices(t)
	withAll := shardMatrix(t, []string{"80:10@200,qdisc=fq_codel", "150:2"}, []float64{0, 1}, []string{MatchedCC, "cubic"}, allArms, 3)
	withAll.Sessions, withAll.BulkCapFractions, withAll.Qlog = []int{1, 2}, []float64{0, 0.5}, true
	withAll.Link = shapedlink.Options{Backend: shapedlink.BackendEmulator, Seed: 7, Offload: shapedlink.OffloadKeep}
	withAll.Shard = Shard{2, 3}
	ms["everything"] = withAll
	twoHostM := shardMatrix(t, []string{"80:10"}, []float64{0}, []string{MatchedCC}, allArms[:2], 3)
	twoHostM.Remote, twoHostM.Shard = "198.18.0.2:7000", Shard{1, 2}
	ms["two-host"] = twoHostM
	for name, m := range ms {
		rec := m.record()
		back, err := matrixFromRecord(rec)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		a, _ := json.Marshal(rec)
		b, _ := json.Marshal(back.record())
		if string(a) != string(b) {
			t.Errorf("%s: record -> matrix -> record changed it:\n%s\n%s", name, a, b)
		}
		if !slices.Equal(planKeys(m.fullPlan()), planKeys(back.fullPlan())) || !slices.Equal(planKeys(m.Plan()), planKeys(back.Plan())) {
			t.Errorf("%s: the rebuilt matrix plans other runs", name)
		}
		for i, rc := range back.fullPlan() {
			if got, want := rc.Profile.String(), m.fullPlan()[i].Profile.String(); got != want {
				t.Errorf("%s: run %d's profile %s, want %s", name, i, got, want)
				break
			}
		}
	}
	for _, tc := range []struct {
		edit func(*matrixRecord)
		want string
	}{
		{func(r *matrixRecord) { r.Profiles = []string{"80:x"} }, `profile "80:x"`},
		{func(r *matrixRecord) { r.Repeats = 0 }, "repeats 0"},
		{func(r *matrixRecord) { r.Arms = nil }, "no profiles, losses, ccs or arms"},
		{func(r *matrixRecord) { r.Shard = "2/2" }, "0/2 to 1/2"},
	} {
		rec := ms["headline"].record()
		tc.edit(&rec)
		if _, err := matrixFromRecord(rec); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("a record with %s: %v", tc.want, err)
		}
	}
}

func planKeys(plan []Run) []string {
	var out []string
	for _, rc := range plan {
		out = append(out, planKey(rc))
	}
	return out
}

func TestShardLines(t *testing.T) {
	m := shardMatrix(t, []string{"80:10"}, []float64{0, 1, 2}, []string{MatchedCC}, allArms[:2], 5)
	if got := m.PlanSummary(m.Plan()); got != "30 runs" {
		t.Errorf("unsharded: %q", got)
	}
	if m.ShardSummaryNote("headline") != "" {
		t.Error("an unsharded matrix has a shard note")
	}
	m.Shard = Shard{1, 4}
	// 15 units: shards 0 to 2 take 4, shard 3 takes 3.
	if got := m.PlanSummary(m.Plan()); got != "shard 1/4: 8 of 30 runs" {
		t.Errorf("shard 1/4: %q", got)
	}
	if got := m.ShardSummaryNote("headline"); !strings.Contains(got, "shard 1/4 only (8 of 30 runs)") || !strings.Contains(got, "go run ./examples/summarise DIR1 DIR2") {
		t.Errorf("shard 1/4's note: %q", got)
	}
}

// fakeRun is a measured run record for rc, enough for results and report.
func fakeRun(rc Run) results.Run {
	start := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	return results.Run{
		Schema: results.SchemaVersion, Cell: rc.Cell, Arm: string(rc.Arm), Repeat: rc.Repeat,
		Started: start, Finished: start.Add(45 * time.Second), Duration: 45 * time.Second, Warmup: reporttest.Warmup,
		Samples:        reporttest.Repeat(100, 120+float64(rc.Repeat), 150, 50),
		ThroughputMbit: 5, ConnectTime: 80 * time.Millisecond,
	}
}

// writeShards writes the work directories of m's n shards under a new
// temporary directory, as the shards' commands would: matrix.json and a
// run.json for every run of each share.
func writeShards(t *testing.T, m *Matrix, n int) []string {
	t.Helper()
	root := t.TempDir()
	var dirs []string
	for i := range n {
		s := *m
		s.Shard = Shard{i, n}
		s.Workdir = filepath.Join(root, fmt.Sprintf("shard-%d", i))
		writeWorkdir(t, &s)
		dirs = append(dirs, s.Workdir)
	}
	return dirs
}

func writeWorkdir(t *testing.T, m *Matrix) {
	t.Helper()
	if err := os.MkdirAll(m.Workdir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := results.WriteJSON(filepath.Join(m.Workdir, matrixFile), m.record()); err != nil {
		t.Fatal(err)
	}
	for _, rc := range m.Plan() {
		if err := results.WriteJSON(filepath.Join(rc.Dir(), results.RunFile), fakeRun(rc)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLoadShardsMerges: the shards' directories merge into exactly the
// full plan's runs, whose report has every cell with every repeat.
func TestLoadShardsMerges(t *testing.T) {
	m := shardMatrix(t, []string{"80:10", "150:2"}, []float64{0, 1, 2}, []string{MatchedCC}, allArms[:2], 3)
	dirs := writeShards(t, m, 4)
	merged, err := LoadShards(dirs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range merged.Runs {
		got = append(got, runKey(r.Cell, r.Arm, r.Repeat))
	}
	want := planKeys(m.fullPlan())
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("merged runs:\n%q\nwant the full plan's:\n%q", got, want)
	}
	if !merged.complete() || merged.Note() != "" || merged.Planned != len(want) || merged.Shards != 4 || len(merged.AbsentShards) != 0 {
		t.Errorf("a complete merge: %+v, note %q", merged, merged.Note())
	}
	for i := range 4 {
		if got, want := merged.ShardPlanned[i], len(shardPlan(m, i, 4)); got != want {
			t.Errorf("shard %d/4: ShardPlanned %d, its share plans %d", i, got, want)
		}
	}
	rep, err := report.Build(merged.Runs, report.Options{Source: strings.Join(dirs, ", ")})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Cells) != 6 {
		t.Errorf("the merged report has %d cells, want 6", len(rep.Cells))
	}
	for _, c := range rep.Cells {
		for _, a := range c.Arms {
			if a.Runs != 3 || a.Measured != 3 {
				t.Errorf("%s %s: %d runs, %d measured; want 3", c.Dir, a.Arm, a.Runs, a.Measured)
			}
		}
	}

	// A shard not given, and a run not yet made: listed, not refused.
	gone := m.fullPlan()[0]
	if err := os.RemoveAll(results.RunDir(dirs[0], gone.Cell, string(gone.Arm), gone.Repeat)); err != nil {
		t.Fatal(err)
	}
	merged, err = LoadShards(dirs[:3])
	if err != nil {
		t.Fatal(err)
	}
	lost := len(m.fullPlan()) - len(merged.Runs)
	if merged.complete() || len(merged.Missing) != lost || !slices.Contains(merged.Missing, planKey(gone)) ||
		len(merged.AbsentShards) != 1 || merged.AbsentShards[0] != (Shard{3, 4}) {
		t.Errorf("merge without shard 3 and one run: missing %d (want %d) %q, absent %v", len(merged.Missing), lost, merged.Missing, merged.AbsentShards)
	}
	note := merged.Note()
	for _, w := range []string{fmt.Sprintf("%d of the matrix's 36 runs", len(merged.Runs)), planKey(gone), "shards not given: 3/4", "more"} {
		if !strings.Contains(note, w) {
			t.Errorf("note %q lacks %q", note, w)
		}
	}
}

// TestLoadShardsRefuses: mixed matrices, one shard twice, differing
// counts, a run in two directories, a run outside its share, a directory
// without matrix.json.
func TestLoadShardsRefuses(t *testing.T) {
	m := shardMatrix(t, []string{"80:10"}, []float64{0, 1}, []string{MatchedCC}, allArms[:2], 2)
	fresh := func() []string { return writeShards(t, m, 2) }
	for _, tc := range []struct {
		name  string
		setup func(dirs []string) []string
		want  []string
	}{
		{"different matrices", func(dirs []string) []string {
			other := *m
			other.Losses = []float64{0, 2}
			other.Shard, other.Workdir = Shard{1, 2}, filepath.Join(t.TempDir(), "other")
			writeWorkdir(t, &other)
			return []string{dirs[0], other.Workdir}
		}, []string{"hold different matrices", "losses: [0,1] in DIR0, [0,2] in OTHER"}},
		{"same shard twice", func(dirs []string) []string {
			twin := *m
			twin.Shard, twin.Workdir = Shard{0, 2}, filepath.Join(t.TempDir(), "twin")
			writeWorkdir(t, &twin)
			return []string{dirs[0], dirs[1], twin.Workdir}
		}, []string{"DIR0 and OTHER are both shard 0/2"}},
		{"two whole matrices", func(dirs []string) []string {
			a, b := *m, *m
			a.Shard, a.Workdir = Shard{}, filepath.Join(t.TempDir(), "a")
			b.Shard, b.Workdir = Shard{}, filepath.Join(t.TempDir(), "b")
			writeWorkdir(t, &a)
			writeWorkdir(t, &b)
			return []string{a.Workdir, b.Workdir}
		}, []string{"each hold the whole matrix"}},
		{"different counts", func(dirs []string) []string {
			three := *m
			three.Shard, three.Workdir = Shard{1, 3}, filepath.Join(t.TempDir(), "three")
			writeWorkdir(t, &three)
			return []string{dirs[0], three.Workdir}
		}, []string{"DIR0 is shard 0/2", "is shard 1/3", "shard counts differ"}},
		{"a run in two directories", func(dirs []string) []string {
			rc := shardPlan(m, 0, 2)[0]
			copyRun(t, rc, dirs[0], dirs[1])
			return []string{dirs[1], dirs[0]}
		}, []string{"in two directories", "DIR0" + string(filepath.Separator), "DIR1" + string(filepath.Separator)}},
		{"a run outside its share", func(dirs []string) []string {
			rc := shardPlan(m, 0, 2)[0]
			copyRun(t, rc, dirs[0], dirs[1])
			if err := os.RemoveAll(results.RunDir(dirs[0], rc.Cell, string(rc.Arm), rc.Repeat)); err != nil {
				t.Fatal(err)
			}
			return dirs
		}, []string{"is not in shard 1/2's share", "DIR1"}},
		{"no matrix.json", func(dirs []string) []string {
			if err := os.Remove(filepath.Join(dirs[1], matrixFile)); err != nil {
				t.Fatal(err)
			}
			return dirs
		}, []string{"DIR1 has no matrix.json"}},
		{"one directory twice", func(dirs []string) []string {
			return []string{dirs[0], dirs[1], dirs[0]}
		}, []string{"is given twice"}},
		{"not a directory", func(dirs []string) []string {
			f := filepath.Join(dirs[1], matrixFile)
			return []string{dirs[0], f}
		}, []string{"is not a directory"}},
	} {
		dirs := fresh()
		args := tc.setup(dirs)
		_, err := LoadShards(args)
		if err == nil {
			t.Errorf("%s: merged", tc.name)
			continue
		}
		msg := strings.NewReplacer(dirs[0], "DIR0", dirs[1], "DIR1").Replace(err.Error())
		if len(args) > 1 && args[len(args)-1] != dirs[0] && args[len(args)-1] != dirs[1] {
			msg = strings.ReplaceAll(msg, args[len(args)-1], "OTHER")
		}
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: error %q lacks %q", tc.name, msg, w)
			}
		}
	}
}

func shardPlan(m *Matrix, i, n int) []Run {
	s := *m
	s.Shard = Shard{i, n}
	return s.Plan()
}

// copyRun copies rc's run.json from one work directory to another.
func copyRun(t *testing.T, rc Run, from, to string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(results.RunDir(from, rc.Cell, string(rc.Arm), rc.Repeat), results.RunFile))
	if err != nil {
		t.Fatal(err)
	}
	dst := results.RunDir(to, rc.Cell, string(rc.Arm), rc.Repeat)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dst, results.RunFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestHeadlineShareExample pins the example docs/shards.md gives: shard 0/6
// of the reference matrix.
func TestHeadlineShareExample(t *testing.T) {
	m := shardMatrix(t, []string{"80:10", "150:2"}, []float64{0, 1, 2}, []string{MatchedCC}, allArms[:2], 5)
	if u := units(m.fullPlan()); u != 30 {
		t.Errorf("%d units, want 30", u)
	}
	m.Shard = Shard{0, 6}
	if got := m.PlanSummary(m.Plan()); got != "shard 0/6: 10 of 60 runs" {
		t.Errorf("opening line %q", got)
	}
	want := []string{
		"80ms-10mbit_loss0_reno/tcp/r1", "80ms-10mbit_loss0_reno/quic/r1",
		"80ms-10mbit_loss1_reno/tcp/r2", "80ms-10mbit_loss1_reno/quic/r2",
		"80ms-10mbit_loss2_reno/tcp/r3", "80ms-10mbit_loss2_reno/quic/r3",
		"150ms-2mbit_loss0_reno/tcp/r4", "150ms-2mbit_loss0_reno/quic/r4",
		"150ms-2mbit_loss1_reno/tcp/r5", "150ms-2mbit_loss1_reno/quic/r5",
	}
	if got := planKeys(m.Plan()); !slices.Equal(got, want) {
		t.Errorf("shard 0/6 plans %q, want %q", got, want)
	}
	m.Shard = Shard{0, 31}
	if err := m.shardFits(); err == nil || !strings.Contains(err.Error(), "at most 30 shards") {
		t.Errorf("31 shards of 30 units: %v", err)
	}
}

// TestLoadShardsTwoHost: the shards of a two-host matrix may each have run
// against a daemon of their own, but a two-host shard does not merge with
// a shard run over namespaces.
func TestLoadShardsTwoHost(t *testing.T) {
	m := shardMatrix(t, []string{"80:10"}, []float64{0}, []string{MatchedCC}, allArms[:2], 4)
	root := t.TempDir()
	var dirs []string
	for i, addr := range []string{"198.18.0.2:7000", "198.18.0.6:7000"} {
		s := *m
		s.Remote, s.Shard, s.Workdir = addr, Shard{i, 2}, filepath.Join(root, fmt.Sprint(i))
		writeWorkdir(t, &s)
		dirs = append(dirs, s.Workdir)
	}
	merged, err := LoadShards(dirs)
	if err != nil {
		t.Fatal(err)
	}
	if !merged.complete() || len(merged.Runs) != 8 || merged.Runs[0].Cell.Profile != results.PathProfile {
		t.Errorf("two-host merge: %d runs, complete %v, first cell %+v", len(merged.Runs), merged.complete(), merged.Runs[0].Cell)
	}
	local := *m
	local.Shard, local.Workdir = Shard{1, 2}, filepath.Join(root, "local")
	writeWorkdir(t, &local)
	if _, err := LoadShards([]string{dirs[0], local.Workdir}); err == nil || !strings.Contains(err.Error(), `remote: "two-host" in `) {
		t.Errorf("a two-host shard with a local one: %v", err)
	}
}
