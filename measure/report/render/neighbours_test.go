package render_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/report/render"
	"github.com/shakenfist/quicbench/measure/report/reporttest"
	"github.com/shakenfist/quicbench/measure/results"
)

// TestNeighbours: runs with cross flows get a Neighbours section and a
// neighbours.csv; a matrix without gets neither.
func TestNeighbours(t *testing.T) {
	b, err := os.ReadFile("../../neighbours/testdata/two_runs.json")
	if err != nil {
		t.Fatal(err)
	}
	var runs []results.Run
	if err := json.Unmarshal(b, &runs); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		runs []results.Run
		want bool
	}{
		"cross": {runs, true},
		"none":  {reporttest.Golden(), false},
	} {
		rep, err := report.Build(tc.runs, report.Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var md bytes.Buffer
		if err := render.WriteMarkdown(&md, rep); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(md.String(), "## Neighbours"); got != tc.want {
			t.Errorf("%s: Neighbours section %v, want %v", name, got, tc.want)
		}
		dir := t.TempDir()
		path, err := render.WriteNeighbours(dir, rep)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		_, statErr := os.Stat(filepath.Join(dir, "neighbours.csv"))
		if (path != "") != tc.want || (statErr == nil) != tc.want {
			t.Errorf("%s: wrote %q (%v), want a file: %v", name, path, statErr, tc.want)
		}
		var js bytes.Buffer
		if err := rep.WriteJSON(&js); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(js.String(), `"neighbours"`); got != tc.want {
			t.Errorf("%s: JSON has neighbours %v, want %v", name, got, tc.want)
		}
	}
}
