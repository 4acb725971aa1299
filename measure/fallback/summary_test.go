package fallback

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCommittedSummaries: each committed fallback work directory reads
// and summarises to its committed summary.md, byte for byte.
func TestCommittedSummaries(t *testing.T) {
	dirs, err := filepath.Glob("../../docs/results/fallback*")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no committed fallback results (%v)", err)
	}
	for _, dir := range dirs {
		want, err := os.ReadFile(filepath.Join(dir, "summary.md"))
		if err != nil {
			t.Fatal(err)
		}
		recs, err := Load(dir)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		var got bytes.Buffer
		if err := Summarise(&got, recs); err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if got.String() != string(want) {
			t.Errorf("%s: the summary is not summary.md:\n%s", dir, got.String())
		}
	}
}
