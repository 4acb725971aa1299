package fallback

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
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

// A record copied beside itself under another name, or of another
// schema, is refused by name, not counted twice or misread.
func TestLoadRefusesCopiesAndOtherSchemas(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("../../docs/results/fallback-loss5-250")); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "80ms-10mbit_loss5", "tcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	copied := filepath.Join(dir, "80ms-10mbit_loss5", "tcp-old.json")
	if err := os.WriteFile(copied, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "tcp-old.json: it records 80ms-10mbit_loss5/tcp.json") {
		t.Errorf("a copied record: %v", err)
	}
	if err := os.WriteFile(copied, []byte(`{"schema": 2}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "schema 2") {
		t.Errorf("a record of another schema: %v", err)
	}
}
