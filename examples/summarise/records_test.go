package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
)

// copyDir copies the directory from to to, as cp -r does.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestCopiedRunsAreNotCounted: a run directory copied aside (cp -r r1
// r1.bak) or over another repeat's place does not count as a repeat: the
// summary is the one the directory gave before the copies, and stderr
// names each copy with the reason it was ignored.
func TestCopiedRunsAreNotCounted(t *testing.T) {
	dir := seedDir(t)
	before, stderr, err := runCmd(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stderr, "ignored") {
		t.Errorf("stderr before any copy: %q", stderr)
	}
	arm := filepath.Join(dir, "80ms-10mbit_loss1_reno", "tcp")
	copyDir(t, filepath.Join(arm, "r1"), filepath.Join(arm, "r1.bak"))
	copyDir(t, filepath.Join(arm, "r1"), filepath.Join(arm, "r9"))
	after, stderr, err := runCmd(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("copies of a run changed the summary:\n%s\n--- before ---\n%s", after, before)
	}
	for _, want := range []string{
		"summarise: ignored 2 run.json files, not counted as runs:",
		filepath.Join(arm, "r1.bak", "run.json") + `: "r1.bak" is not a run's directory`,
		filepath.Join(arm, "r9", "run.json") + ": it records 80ms-10mbit_loss1_reno/tcp/r1, not the run whose directory it is in",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

// TestRunOfAnotherDurationIsRefused: where the work directory has
// matrix.json, a run whose duration is not the matrix's is refused,
// naming the run's file and both durations.
func TestRunOfAnotherDurationIsRefused(t *testing.T) {
	dir := seedDir(t)
	runs, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	rec := map[string]any{"profiles": []string{"80:10"}, "losses": []float64{0, 1, 2}, "ccs": []string{"reno"},
		"arms": []string{"tcp", "quic"}, "repeats": 5, "workload": map[string]any{"duration": runs[0].Duration}}
	if err := results.WriteJSON(filepath.Join(dir, "matrix.json"), rec); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCmd(t, dir); err != nil {
		t.Fatalf("runs of the matrix's duration: %v", err)
	}
	r := runs[3]
	r.Duration += 10 * time.Second
	p := filepath.Join(results.RunDir(dir, r.Cell, r.Arm, r.Repeat), results.RunFile)
	if err := results.WriteJSON(p, r); err != nil {
		t.Fatal(err)
	}
	_, _, err = runCmd(t, dir)
	if err == nil || !strings.Contains(err.Error(), p+" records a run of "+r.Duration.String()) ||
		!strings.Contains(err.Error(), "runs "+runs[0].Duration.String()) {
		t.Errorf("a run of %v beside the matrix's %v: %v", r.Duration, runs[0].Duration, err)
	}
}

// TestRecordCannotSteerPlots: a run.json whose cell names a path as its
// congestion control is refused when read, and -plots writes nothing
// outside its directory.
func TestRecordCannotSteerPlots(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "results")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	copyDir(t, seedDir(t), dir)
	runs, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Edited in place, so the file is where a run's record goes.
	r := runs[0]
	p := filepath.Join(results.RunDir(dir, r.Cell, r.Arm, r.Repeat), results.RunFile)
	r.Cell.CC = "../../../X"
	if err := results.WriteJSON(p, r); err != nil {
		t.Fatal(err)
	}
	plots := filepath.Join(dir, "plots")
	_, _, err = runCmd(t, "-plots", plots, dir)
	if err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "congestion control") {
		t.Errorf("a record with a path for its congestion control: %v, want it refused by name", err)
	}
	filepath.WalkDir(root, func(f string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(f, ".png") {
			t.Errorf("wrote %s", f)
		}
		return nil
	})
}

// TestRecordThatIsAPipeIsRefused: a run.json that is a named pipe is
// refused at once instead of waited on.
func TestRecordThatIsAPipeIsRefused(t *testing.T) {
	dir := seedDir(t)
	runs, err := results.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(results.RunDir(dir, runs[0].Cell, runs[0].Arm, runs[0].Repeat), results.RunFile)
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if err := mkfifo(p); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, _, err := runCmd(t, dir); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "named pipe") {
			t.Errorf("a run.json that is a pipe: %v, want it refused", err)
		}
	case <-time.After(10 * time.Second):
		t.Error("summarise still waits on a run.json that is a pipe after 10 s")
		releasePipe(p)
	}
}
