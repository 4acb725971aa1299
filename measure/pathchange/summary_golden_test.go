package pathchange

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/shakenfist/quicbench/measure/results"
)

// TestResumedSummaryGolden: a work directory whose runs all have their
// records is read back, not measured, and summarised byte for byte as
// testdata/summary.golden.md (rerun with -update-golden when a change is
// meant).
func TestResumedSummaryGolden(t *testing.T) {
	c := validConfig(t)
	golden := goldenRuns()
	for i, rc := range c.plan() {
		rec := golden[i%len(golden)]
		rec.Cell, rec.Arm, rec.Repeat, rec.Order = rc.Cell, string(rc.Arm), rc.Repeat, rc.Change.Order
		if err := results.WriteJSON(filepath.Join(rc.dir(), recordFile), rec); err != nil {
			t.Fatal(err)
		}
	}
	res, err := Run(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "summary.golden.md")
	if *updateGolden {
		if err := os.WriteFile(path, []byte(res.Summary), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestResumedSummaryGolden -update-golden to create it)", err)
	}
	if res.Summary != string(want) {
		t.Errorf("the summary differs from %s:\n%s", path, res.Summary)
	}
}

// A record counts as its run's only when it names that run: one copied
// from another run's directory does not.
func TestRecordNamesItsRun(t *testing.T) {
	plan := validConfig(t).plan()
	a, b := plan[0], plan[len(plan)-1]
	rec := Record{Cell: a.Cell, Arm: string(a.Arm), Repeat: a.Repeat}
	if !a.names(rec) || b.names(rec) {
		t.Errorf("run %s %s r%d's record: names it %v, names %s %s r%d %v", a.Cell.Dir(), a.Arm, a.Repeat, a.names(rec), b.Cell.Dir(), b.Arm, b.Repeat, b.names(rec))
	}
}
