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
		if err := results.WriteJSON(filepath.Join(rc.dir(), RecordFile), rec); err != nil {
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
