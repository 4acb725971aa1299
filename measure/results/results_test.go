package results

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/stats"
)

func TestWriteLoadRoundTrip(t *testing.T) {
	dir := t.TempDir()
	c := Cell{Profile: "80:10", RTTms: 80, RateMbit: 10, LossPct: 1, CC: "reno"}
	if got := c.Dir(); got != "80ms-10mbit_loss1_reno" {
		t.Fatalf("Dir = %q", got)
	}
	c2 := Cell{Profile: "150:2", RTTms: 150, RateMbit: 2, LossPct: 0.5, CC: "reno"}
	want := []Run{}
	for _, cell := range []Cell{c2, c} {
		for _, arm := range []string{"quic", "tcp"} {
			for rep := 2; rep >= 1; rep-- {
				r := validRun(cell, arm, rep)
				rd := RunDir(dir, cell, arm, rep)
				if done(rd, cell, arm, rep) {
					t.Fatalf("%s done before written", rd)
				}
				if err := WriteJSON(filepath.Join(rd, RunFile), r); err != nil {
					t.Fatal(err)
				}
				if !done(rd, cell, arm, rep) {
					t.Fatalf("%s not done after write", rd)
				}
				want = append(want, r)
			}
		}
	}
	runs, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != len(want) {
		t.Fatalf("loaded %d runs, want %d", len(runs), len(want))
	}
	// Sorted: 80 ms before 150 ms, quic before tcp, r1 before r2.
	first, last := runs[0], runs[len(runs)-1]
	if first.Cell.RTTms != 80 || first.Arm != "quic" || first.Repeat != 1 {
		t.Errorf("first run %+v", first)
	}
	if last.Cell.RTTms != 150 || last.Arm != "tcp" || last.Repeat != 2 {
		t.Errorf("last run %+v", last)
	}
	if first.Samples[0].RTT != 80*time.Millisecond {
		t.Errorf("samples did not round-trip: %+v", first.Samples)
	}
	// No temporary files are left behind.
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if strings.Contains(d.Name(), ".tmp-") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

// validRun is a measured run that passes Validate.
func validRun(c Cell, arm string, repeat int) Run {
	start := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	return Run{Schema: SchemaVersion, Cell: c, Arm: arm, Repeat: repeat,
		Started: start, Finished: start.Add(46 * time.Second), Duration: 45 * time.Second, Warmup: 5 * time.Second,
		Samples: []stats.Sample{{Offset: 6 * time.Second, RTT: 80 * time.Millisecond}}, ThroughputMbit: 9.5}
}

func TestLoadRejects(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(dir); err == nil {
		t.Error("empty directory accepted")
	}
	// Where a run's record goes, a record that does not validate is
	// refused.
	rd := filepath.Join(dir, "80ms-10mbit_loss1_reno", "tcp", "r1")
	if err := os.MkdirAll(rd, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(rd, RunFile)
	os.WriteFile(p, []byte(`{"schema": 99}`), 0o644)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "schema") {
		t.Errorf("wrong schema: %v", err)
	}
	os.WriteFile(p, []byte(`{"schema": 1}`), 0o644)
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "repeat") {
		t.Errorf("a record with no identity or times accepted: %v", err)
	}
	os.WriteFile(p, []byte(`{`), 0o644)
	if _, err := Load(dir); err == nil {
		t.Error("bad JSON accepted")
	}
}

// TestScanCountsOnlyRunDirectories: a run directory copied aside, a
// record copied into another repeat's directory and a run.json anywhere
// else are not runs; each is listed with its reason, and the real run is
// counted once.
func TestScanCountsOnlyRunDirectories(t *testing.T) {
	dir := t.TempDir()
	c := Cell{Profile: "80:10", RTTms: 80, RateMbit: 10, LossPct: 1, CC: "reno"}
	put := func(rel string, r Run) string {
		t.Helper()
		p := filepath.Join(dir, rel, RunFile)
		if err := WriteJSON(p, r); err != nil {
			t.Fatal(err)
		}
		return p
	}
	put(filepath.Join(c.Dir(), "tcp", "r1"), validRun(c, "tcp", 1))
	copies := map[string]string{
		put(filepath.Join(c.Dir(), "tcp", "r1.bak"), validRun(c, "tcp", 1)):    `"r1.bak" is not a run's directory`,
		put(filepath.Join(c.Dir(), "tcp", "r2"), validRun(c, "tcp", 1)):        "it records " + c.Dir() + "/tcp/r1, not the run",
		put(filepath.Join(c.Dir(), "quic", "r1"), validRun(c, "tcp", 1)):       "it records " + c.Dir() + "/tcp/r1, not the run",
		put(filepath.Join(c.Dir(), "tcp", "r01"), validRun(c, "tcp", 1)):       "it records " + c.Dir() + "/tcp/r1, not the run",
		put("", validRun(c, "tcp", 1)):                                         "not where a run's record goes",
		put(filepath.Join("old", c.Dir(), "tcp", "r1"), validRun(c, "tcp", 1)): "not where a run's record goes",
	}
	got, err := Scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Runs) != 1 || got.Runs[0].Repeat != 1 || got.Runs[0].Arm != "tcp" {
		t.Errorf("counted %d runs (%+v), want the one tcp r1", len(got.Runs), got.Runs)
	}
	if len(got.Ignored) != len(copies) {
		t.Errorf("ignored %d files, want %d: %v", len(got.Ignored), len(copies), got.Ignored)
	}
	for _, ig := range got.Ignored {
		if want, ok := copies[ig.Path]; !ok || !strings.Contains(ig.Why, want) {
			t.Errorf("ignored %s because %q; want %q", ig.Path, ig.Why, want)
		}
	}
	note := IgnoredNote(got.Ignored)
	if !strings.HasPrefix(note, fmt.Sprintf("ignored %d run.json files", len(copies))) || !strings.Contains(note, "and 1 more") {
		t.Errorf("note %q", note)
	}
}

// TestValidateRefusesPathsInNames: a field that goes into a file name
// (the cell's congestion control and figures, the arm) must be a name.
func TestValidateRefusesPathsInNames(t *testing.T) {
	c := Cell{Profile: "80:10", RTTms: 80, RateMbit: 10, LossPct: 1, CC: "reno"}
	if err := validRun(c, "quic-per-channel", 1).Validate(); err != nil {
		t.Fatalf("a valid run: %v", err)
	}
	for name, mutate := range map[string]func(*Run){
		"cc with a path":   func(r *Run) { r.Cell.CC = "../../../X" },
		"cc with a slash":  func(r *Run) { r.Cell.CC = "a/b" },
		"empty cc":         func(r *Run) { r.Cell.CC = "" },
		"long cc":          func(r *Run) { r.Cell.CC = strings.Repeat("c", 16) },
		"arm with a path":  func(r *Run) { r.Arm = "../x" },
		"arm with a dot":   func(r *Run) { r.Arm = ".." },
		"arm in capitals":  func(r *Run) { r.Arm = "TCP" },
		"NaN round trip":   func(r *Run) { r.Cell.RTTms = math.NaN() },
		"infinite rate":    func(r *Run) { r.Cell.RateMbit = math.Inf(1) },
		"negative loss":    func(r *Run) { r.Cell.LossPct = -1 },
		"loss over 100":    func(r *Run) { r.Cell.LossPct = 101 },
		"negative cap":     func(r *Run) { r.Cell.BulkCapFraction = -0.5 },
		"negative session": func(r *Run) { r.Cell.Sessions = -2 },
	} {
		r := validRun(c, "tcp", 1)
		mutate(&r)
		if err := r.Validate(); err == nil {
			t.Errorf("%s: %+v validated", name, r.Cell)
		}
	}
}

func TestCellDirSuffixes(t *testing.T) {
	base := Cell{Profile: "80:10", RTTms: 80, RateMbit: 10, LossPct: 1, CC: "reno"}
	cases := []struct {
		c    Cell
		want string
	}{
		{base, "80ms-10mbit_loss1_reno"},
		{func() Cell { c := base; c.Sessions = 4; return c }(), "80ms-10mbit_loss1_reno_s4"},
		{func() Cell { c := base; c.Sessions = 1; return c }(), "80ms-10mbit_loss1_reno_s1"},
		{func() Cell { c := base; c.BulkCapFraction = 0.5; c.BulkRateCapBps = 5e6; return c }(), "80ms-10mbit_loss1_reno_cap0.5"},
		// A named limit or link options make a profile of their own.
		{func() Cell { c := base; c.Profile = "80:10@200"; return c }(), "80ms-10mbit_loss1_reno_limit200"},
		{func() Cell { c := base; c.Profile = "80:10,up.rate=5"; return c }(), "80ms-10mbit_loss1_reno_up.rate-5"},
		{func() Cell { c := base; c.Profile = "80:10@200,down.delay=60,up.delay=20"; return c }(), "80ms-10mbit_loss1_reno_limit200_down.delay-60_up.delay-20"},
	}
	seen := map[string]bool{}
	for _, tc := range cases {
		if got := tc.c.Dir(); got != tc.want {
			t.Errorf("Dir(%+v) = %q, want %q", tc.c, got, tc.want)
		}
		seen[tc.c.Dir()] = true
	}
	if len(seen) != len(cases) {
		t.Error("cells that differ only in sessions, cap, limit or options share a directory")
	}
	a, b := base, base
	b.Sessions = 2
	if !Less(a, b) || Less(b, a) {
		t.Error("cells differing only in sessions are not ordered")
	}
	b = base
	b.BulkCapFraction = 0.8
	if !Less(a, b) || Less(b, a) {
		t.Error("cells differing only in cap are not ordered")
	}
}

func TestSessionResultsFallsBackToTopLevel(t *testing.T) {
	r := Run{Samples: []stats.Sample{{RTT: time.Millisecond}}, Timeouts: 1, ThroughputMbit: 3}
	ss := r.SessionResults()
	if len(ss) != 1 || ss[0].Timeouts != 1 || ss[0].ThroughputMbit != 3 || len(ss[0].Samples) != 1 {
		t.Errorf("single-session run gave %+v", ss)
	}
	r.Sessions = []SessionResult{{Index: 0, ThroughputMbit: 1}, {Index: 1, ThroughputMbit: 2}}
	if ss := r.SessionResults(); len(ss) != 2 || ss[1].ThroughputMbit != 2 {
		t.Errorf("multi-session run gave %+v", ss)
	}
}

// TestCheckStates: a run directory is measured only if its record parses,
// validates and belongs there; a failed record is kept but not done; a
// corrupt one is corrupt.
func TestCheckStates(t *testing.T) {
	dir := t.TempDir()
	c := Cell{Profile: "80:10", RTTms: 80, RateMbit: 10, LossPct: 1, CC: "reno"}
	rd := RunDir(dir, c, "tcp", 1)
	write := func(r Run) {
		t.Helper()
		if err := WriteJSON(filepath.Join(rd, RunFile), r); err != nil {
			t.Fatal(err)
		}
	}
	if _, st, err := Check(rd, c, "tcp", 1); st != missing || err != nil {
		t.Errorf("no record: %v %v", st, err)
	}
	write(validRun(c, "tcp", 1))
	if _, st, err := Check(rd, c, "tcp", 1); st != Measured || err != nil {
		t.Errorf("valid record: %v %v", st, err)
	}
	failed := validRun(c, "tcp", 1)
	failed.Failed = "building the link: no netem"
	write(failed)
	if _, st, _ := Check(rd, c, "tcp", 1); st != FailedRun || done(rd, c, "tcp", 1) {
		t.Errorf("failed record: %v, done %v", st, done(rd, c, "tcp", 1))
	}
	for name, mutate := range map[string]func(*Run){
		"another arm's record": func(r *Run) { r.Arm = "quic" },
		"another repeat":       func(r *Run) { r.Repeat = 2 },
		"another cell":         func(r *Run) { r.Cell.LossPct = 2 },
		"old schema":           func(r *Run) { r.Schema = 0 },
		"no times":             func(r *Run) { r.Started, r.Finished = time.Time{}, time.Time{} },
		"warm-up too long":     func(r *Run) { r.Warmup = r.Duration },
		"negative round trip":  func(r *Run) { r.Samples[0].RTT = -1 },
		"negative throughput":  func(r *Run) { r.ThroughputMbit = -1 },
	} {
		r := validRun(c, "tcp", 1)
		mutate(&r)
		write(r)
		if _, st, err := Check(rd, c, "tcp", 1); st != Corrupt || err == nil {
			t.Errorf("%s: %v %v, want corrupt with a reason", name, st, err)
		}
	}
	if err := os.WriteFile(filepath.Join(rd, RunFile), []byte(`{"schema":1,"arm":"tc`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, st, err := Check(rd, c, "tcp", 1); st != Corrupt || err == nil {
		t.Errorf("truncated record: %v %v", st, err)
	}
}

// TestSetAside: a set-aside run directory keeps its files under a name that
// says why, and Load no longer reads it.
func TestSetAside(t *testing.T) {
	dir := t.TempDir()
	c := Cell{Profile: "80:10", RTTms: 80, RateMbit: 10, LossPct: 1, CC: "reno"}
	for rep := 1; rep <= 2; rep++ {
		if err := WriteJSON(filepath.Join(RunDir(dir, c, "tcp", rep), RunFile), validRun(c, "tcp", rep)); err != nil {
			t.Fatal(err)
		}
	}
	rd := RunDir(dir, c, "tcp", 1)
	for n := 1; n <= 2; n++ {
		to, err := SetAside(rd, "failed")
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf("%s.failed-%d", rd, n); to != want {
			t.Errorf("set aside to %s, want %s", to, want)
		}
		if _, err := os.Stat(filepath.Join(to, RunFile)); err != nil {
			t.Errorf("the record did not move with its directory: %v", err)
		}
		if err := WriteJSON(filepath.Join(rd, RunFile), validRun(c, "tcp", 1)); err != nil {
			t.Fatal(err)
		}
	}
	runs, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 2 {
		t.Errorf("Load read %d runs, want 2 (set-aside directories are not runs)", len(runs))
	}
}

// A figure no run can have (a round trip of 292 years, a terabit and more)
// is refused, as a negative one is; a day is the bound.
func TestValidateRefusesAbsurdFigures(t *testing.T) {
	c := Cell{Profile: "80:10", RTTms: 80, RateMbit: 10, LossPct: 1, CC: "reno"}
	if err := validRun(c, "tcp", 1).Validate(); err != nil {
		t.Fatalf("a good run: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(*Run)
	}{
		{"round trip", func(r *Run) { r.Samples[0].RTT = math.MaxInt64 }},
		{"offset", func(r *Run) { r.Samples[0].Offset = 25 * time.Hour }},
		{"duration", func(r *Run) { r.Duration = math.MaxInt64 }},
		{"finished", func(r *Run) { r.Finished = r.Started.Add(48 * time.Hour) }},
		{"connect", func(r *Run) { r.ConnectTime = math.MaxInt64 }},
		{"throughput", func(r *Run) { r.ThroughputMbit = math.MaxFloat64 }},
	} {
		r := validRun(c, "tcp", 1)
		tc.change(&r)
		if err := r.Validate(); err == nil {
			t.Errorf("%s: an absurd figure passed Validate", tc.name)
		}
	}
	r := validRun(c, "tcp", 1)
	r.Samples[0].RTT = 23 * time.Hour
	r.Samples[0].Offset = 23 * time.Hour
	r.Finished = r.Started.Add(23*time.Hour + time.Minute)
	r.Duration = 23*time.Hour + time.Minute
	if err := r.Validate(); err != nil {
		t.Errorf("figures under a day were refused: %v", err)
	}
}

// done reports whether dir holds a valid record of a measured run: the only
// kind a resumed matrix skips.
func done(dir string, c Cell, arm string, repeat int) bool {
	_, st, _ := Check(dir, c, arm, repeat)
	return st == Measured
}
