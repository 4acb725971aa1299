package results

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type sideRecord struct {
	Arm   string `json:"arm"`
	Extra int    `json:"extra"`
}

// scanExtra pairs each counted run with its experiment's record, reports a
// missing one as that run's Err, and leaves out what Scan leaves out.
func TestScanExtra(t *testing.T) {
	dir := t.TempDir()
	c := Cell{Profile: "80:10", RTTms: 80, RateMbit: 10, CC: "reno"}
	for rep := 1; rep <= 2; rep++ {
		r := NewRun(c, "tcp", false, rep, 10*time.Second, time.Second)
		r.Started, r.Finished = time.Unix(1e9, 0), time.Unix(1e9+10, 0)
		if err := WriteJSON(filepath.Join(RunDir(dir, c, "tcp", rep), RunFile), r); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteJSON(filepath.Join(RunDir(dir, c, "tcp", 1), "side.json"), sideRecord{"tcp", 7}); err != nil {
		t.Fatal(err)
	}
	// A copy aside is Scan's to ignore.
	if err := os.CopyFS(RunDir(dir, c, "tcp", 1)+".bak", os.DirFS(RunDir(dir, c, "tcp", 1))); err != nil {
		t.Fatal(err)
	}
	got, ignored, err := scanExtra[sideRecord](dir, "side.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(ignored) != 1 {
		t.Fatalf("%d runs, %d ignored, want 2 and 1", len(got), len(ignored))
	}
	if got[0].Run.Repeat != 1 || got[0].Err != nil || got[0].Rec != (sideRecord{"tcp", 7}) || got[0].Dir != RunDir(dir, c, "tcp", 1) {
		t.Errorf("run 1: %+v", got[0])
	}
	if got[1].Run.Repeat != 2 || !errors.Is(got[1].Err, fs.ErrNotExist) || got[1].Rec != (sideRecord{}) {
		t.Errorf("run 2, without its record: %+v", got[1])
	}
	if _, err := LoadExtra[sideRecord](t.TempDir(), "side.json"); err == nil {
		t.Error("LoadExtra of an empty directory: no error")
	}
	for _, bad := range []string{"", RunFile, "../x.json", "a/b.json", ".."} {
		if _, err := ReadExtra[sideRecord](dir, bad); err == nil || !strings.Contains(err.Error(), "cannot name") {
			t.Errorf("ReadExtra(%q): %v", bad, err)
		}
	}
}

// ReadPlaced counts a record only at the place it names, reads only what
// the pattern matches, and fails on a record place refuses.
func TestReadPlaced(t *testing.T) {
	dir := t.TempDir()
	write := func(rel string, r sideRecord) {
		t.Helper()
		if err := WriteJSON(filepath.Join(dir, rel), r); err != nil {
			t.Fatal(err)
		}
	}
	write("p1/tcp.json", sideRecord{"tcp", 1})
	write("p1/quic.json", sideRecord{"quic", 2})
	write("p1/old-tcp.json", sideRecord{"tcp", 3})  // a copy
	write("p1/tcp/run.json", sideRecord{"deep", 4}) // not matched
	write("top.json", sideRecord{"top", 5})         // not matched
	place := func(r sideRecord) (string, error) {
		if r.Extra < 0 {
			return "", errors.New("another schema")
		}
		return "p1/" + r.Arm + ".json", nil
	}
	got, ignored, err := ReadPlaced(dir, "*/*.json", place)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Arm != "quic" || got[1].Arm != "tcp" {
		t.Errorf("records %+v, want quic and tcp", got)
	}
	if len(ignored) != 1 || !strings.HasSuffix(ignored[0].Path, "old-tcp.json") || !strings.Contains(ignored[0].Why, "p1/tcp.json") {
		t.Errorf("ignored %v", ignored)
	}
	write("p1/x.json", sideRecord{"x", -1})
	if _, _, err := ReadPlaced(dir, "*/*.json", place); err == nil || !strings.Contains(err.Error(), "x.json: another schema") {
		t.Errorf("a refused record: %v", err)
	}
	if _, _, err := ReadPlaced(dir, "[", place); err == nil {
		t.Error("a bad pattern: no error")
	}
}
