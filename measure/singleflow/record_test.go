package singleflow

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/shakenfist/quicbench/measure/results"
)

// readRecord reads the record in dir.
func readRecord(t *testing.T, dir string) Record {
	t.Helper()
	var r Record
	if err := results.ReadJSON(filepath.Join(dir, RecordFile), &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestResumeKeepsFailedRunsToRedo: a failed run is kept in the record and
// run again; Replace puts the new outcome in its place.
func TestResumeKeepsFailedRunsToRedo(t *testing.T) {
	dir := t.TempDir()
	rec := Record{Profiles: []string{"20:20"}, Losses: []float64{0}, Repeats: 2, Duration: "3s", Warmup: "1s"}
	ok := Result{Profile: "20:20", Flow: "quic", Repeat: 1, GoodputMbit: 19}
	bad := Result{Profile: "20:20", Flow: "quic", Repeat: 2, Error: "dialling: refused"}
	if err := rec.Write(dir, []Result{ok, bad}, true); err != nil {
		t.Fatal(err)
	}
	rs, err := rec.Resume(dir)
	if err != nil || len(rs) != 2 || rs[1].Error == "" {
		t.Fatalf("resume: %+v, %v", rs, err)
	}
	redone := bad
	redone.Error, redone.GoodputMbit = "", 18
	if rs = Replace(rs, redone); len(rs) != 2 || rs[1].Error != "" {
		t.Errorf("replace: %+v", rs)
	}
	other := rec
	other.Repeats = 3
	if _, err := other.Resume(dir); err == nil {
		t.Error("other settings resumed")
	}
}

// The committed results' flows are what the default flows record, so a
// work directory written before flows became arms still resumes.
func TestCommittedFlowsReadTheSame(t *testing.T) {
	had := readRecord(t, "../../docs/results/singleflow")
	got, err := json.Marshal(RecordedFlows(DefaultFlows()))
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(had.Flows)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("the default flows record as %s, the committed results as %s", got, want)
	}
}
