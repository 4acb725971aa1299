package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/plan"
	"github.com/shakenfist/quicbench/measure/report/reporttest"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
)

// writeSeedShards writes the seed's reno cells (80:10 at 0, 1 and 2% loss,
// tcp and quic, 5 repeats) as the work directories of n shards, each with
// the matrix.json its command would write, and returns them.
func writeSeedShards(t *testing.T, n int) []string {
	t.Helper()
	seed := map[string]results.Run{}
	for _, r := range reporttest.Seed() {
		if r.Cell.CC == "reno" {
			seed[results.RunDir("", r.Cell, r.Arm, r.Repeat)] = r
		}
	}
	p, err := shapedlink.ParseProfile("80:10")
	if err != nil {
		t.Fatal(err)
	}
	m := &plan.Matrix{Profiles: []shapedlink.Profile{p}, Losses: []float64{0, 1, 2},
		CCs: []string{"reno"}, Arms: []measure.Arm{"tcp", "quic"}, Repeats: 5}
	w := spicelike.Defaults()
	w.Duration, w.Warmup = 45*time.Second, reporttest.Warmup
	root := t.TempDir()
	var dirs []string
	written := 0
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("shard-%d", i))
		// matrix.json as the matrix commands write it.
		rec := map[string]any{"profiles": []string{"80:10"}, "losses": m.Losses, "ccs": m.CCs, "arms": m.Arms,
			"repeats": m.Repeats, "workload": w, "workdir": dir, "qlog": false, "shard": fmt.Sprintf("%d/%d", i, n)}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := results.WriteJSON(filepath.Join(dir, "matrix.json"), rec); err != nil {
			t.Fatal(err)
		}
		m.Shard = plan.Shard{Index: i, Count: n}
		for _, rc := range m.Plan() {
			r, ok := seed[results.RunDir("", rc.Cell, string(rc.Arm), rc.Repeat)]
			if !ok {
				t.Fatalf("the seed has no run for %s", results.RunDir("", rc.Cell, string(rc.Arm), rc.Repeat))
			}
			if err := results.WriteJSON(filepath.Join(results.RunDir(dir, rc.Cell, string(rc.Arm), rc.Repeat), results.RunFile), r); err != nil {
				t.Fatal(err)
			}
			written++
		}
		dirs = append(dirs, dir)
	}
	if written != len(seed) {
		t.Fatalf("the shards hold %d runs, the seed's reno cells %d", written, len(seed))
	}
	return dirs
}

// TestMergesShards: two shards' directories give the summary that one
// directory of the same runs gives, naming both; a merge short of a run
// says so on stderr; a directory without matrix.json is refused.
func TestMergesShards(t *testing.T) {
	dirs := writeSeedShards(t, 2)
	merged, stderr, err := runCmd(t, dirs...)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr, "merge") {
		t.Errorf("a complete merge printed a note: %q", stderr)
	}
	for _, want := range []string{
		"| 80 ms / 10 Mbit | 0% | -4.8 | 1.2 | QUIC better |",
		"| 80 ms / 10 Mbit | 1% | +61.6 | 0.9 | QUIC worse |",
		"| 80 ms / 10 Mbit | 2% | +75.0 | 300.5 | unresolved |",
		dirs[0] + ", " + dirs[1],
	} {
		if !strings.Contains(merged, want) {
			t.Errorf("merged summary lacks %q", want)
		}
	}

	// The same runs in one directory: the same summary but for its source.
	one := t.TempDir()
	for _, d := range dirs {
		runs, err := results.Load(d)
		if err != nil {
			t.Fatal(err)
		}
		if err := reporttest.Write(one, runs); err != nil {
			t.Fatal(err)
		}
	}
	single, _, err := runCmd(t, one)
	if err != nil {
		t.Fatal(err)
	}
	if strings.ReplaceAll(merged, dirs[0]+", "+dirs[1], "SRC") != strings.ReplaceAll(single, one, "SRC") {
		t.Errorf("the merged summary differs from one directory's of the same runs:\n%s\n---\n%s", merged, single)
	}

	// A run not made yet: merged anyway, with a note.
	gone := filepath.Join(dirs[1], "80ms-10mbit_loss2_reno", "quic")
	ents, err := os.ReadDir(gone)
	if err != nil || len(ents) == 0 {
		t.Fatalf("shard 1 has no quic run at 2%%: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(gone, ents[0].Name())); err != nil {
		t.Fatal(err)
	}
	_, stderr, err = runCmd(t, dirs...)
	if err != nil {
		t.Fatal(err)
	}
	if want := "summarise: the merge holds 29 of the matrix's 30 runs; 1 missing: 80ms-10mbit_loss2_reno/quic/" + ents[0].Name(); !strings.Contains(stderr, want) {
		t.Errorf("stderr %q lacks %q", stderr, want)
	}

	if _, _, err := runCmd(t, dirs[0], seedDir(t)); err == nil || !strings.Contains(err.Error(), "has no matrix.json") {
		t.Errorf("merging a directory without matrix.json: %v", err)
	}
}

// TestMergeNamesBothFiles: a run directory copied aside inside a shard is
// listed as ignored and the merge goes on; a run copied into another
// shard's directory is refused with both files named.
func TestMergeNamesBothFiles(t *testing.T) {
	dirs := writeSeedShards(t, 2)
	runs, err := results.Load(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	r := runs[0]
	rd := results.RunDir(dirs[0], r.Cell, r.Arm, r.Repeat)
	copyDir(t, rd, rd+".bak")
	_, stderr, err := runCmd(t, dirs...)
	if err != nil {
		t.Fatalf("a shard with a run copied aside: %v", err)
	}
	if want := filepath.Join(rd+".bak", results.RunFile); !strings.Contains(stderr, "ignored 1 run.json, not counted as runs: "+want) {
		t.Errorf("stderr does not list %s as ignored:\n%s", want, stderr)
	}

	other := results.RunDir(dirs[1], r.Cell, r.Arm, r.Repeat)
	copyDir(t, rd, other)
	_, _, err = runCmd(t, dirs...)
	a, b := filepath.Join(rd, results.RunFile), filepath.Join(other, results.RunFile)
	if err == nil || !strings.Contains(err.Error(), "in two directories, as "+a+" and as "+b) {
		t.Errorf("a run in two shards' directories: %v, want both files named (%s, %s)", err, a, b)
	}
}
