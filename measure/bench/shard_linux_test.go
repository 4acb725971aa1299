package bench

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/shakenfist/quicbench/measure/plan"
	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
)

// TestShardsEndToEnd runs a tiny matrix (one cell, tcp and quic, two
// repeats of 3 s) as shards 0/2 and 1/2 into two work directories, one
// after the other on this machine, and merges them: the merge holds
// exactly the unsharded plan's runs, and its report has every cell.
func TestShardsEndToEnd(t *testing.T) {
	shapedlinktest.Need(t)
	m := tinyMatrix(t, "tcp", "quic")
	m.Repeats = 2
	var dirs []string
	for i := range 2 {
		s := *m
		s.Shard = plan.Shard{Index: i, Count: 2}
		s.Workdir = t.TempDir()
		if err := Run(context.Background(), &s, Options{}); err != nil {
			t.Fatalf("shard %s: %v", s.Shard, err)
		}
		runs, err := results.Load(s.Workdir)
		if err != nil {
			t.Fatal(err)
		}
		// One unit (a repeat with both arms) per shard.
		if len(runs) != 2 || runs[0].Repeat != runs[1].Repeat || runs[0].Repeat != i+1 {
			t.Errorf("shard %s recorded %d runs: %+v", s.Shard, len(runs), runKeys(runs))
		}
		dirs = append(dirs, s.Workdir)
		if i == 0 {
			// One shard alone: a merge that says what it lacks.
			part, err := plan.LoadShards(dirs)
			if err != nil {
				t.Fatal(err)
			}
			if len(part.Missing) != 2 || len(part.AbsentShards) != 1 || len(part.Missing) == 0 {
				t.Errorf("shard 0 alone: missing %q, absent %v", part.Missing, part.AbsentShards)
			}
		}
	}
	merged, err := plan.LoadShards(dirs)
	if err != nil {
		t.Fatal(err)
	}
	got, want := runKeys(merged.Runs), planKeys(m.Plan())
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("merged runs %q, want the unsharded plan's %q", got, want)
	}
	if len(merged.Missing) != 0 || merged.Failed != 0 {
		t.Errorf("the merge is not complete: %s", merged.Note())
	}
	rep, err := report.Build(merged.Runs, report.Options{Source: dirs[0] + ", " + dirs[1]})
	if err != nil {
		t.Fatal(err)
	}
	cells := map[string]bool{}
	for _, rc := range m.Plan() {
		cells[rc.Cell.Dir()] = true
	}
	if len(rep.Cells) != len(cells) {
		t.Fatalf("the report has %d cells, the matrix %d", len(rep.Cells), len(cells))
	}
	for _, c := range rep.Cells {
		if !cells[c.Dir] || len(c.Arms) != 2 {
			t.Errorf("cell %s with %d arms", c.Dir, len(c.Arms))
		}
		for _, a := range c.Arms {
			if a.Runs != 2 {
				t.Errorf("%s %s: %d runs in the report, want 2", c.Dir, a.Arm, a.Runs)
			}
		}
	}
}

// runKeys names runs as cell/arm/rN.
func runKeys(runs []results.Run) []string {
	var out []string
	for _, r := range runs {
		out = append(out, fmt.Sprintf("%s/%s/r%d", r.Cell.Dir(), r.Arm, r.Repeat))
	}
	return out
}

// planKeys names planned runs as runKeys does.
func planKeys(runs []plan.Run) []string {
	var out []string
	for _, r := range runs {
		out = append(out, fmt.Sprintf("%s/%s/r%d", r.Cell.Dir(), r.Arm, r.Repeat))
	}
	return out
}
