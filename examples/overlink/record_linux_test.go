package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/examples/internal/cmdtest"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
)

// TestRecordPathRefusedFirst: a -record that cannot be written is refused
// with status 2 before the link is built or any command runs (overlink
// used to run the whole command and then exit 1).
func TestRecordPathRefusedFirst(t *testing.T) {
	root := cmdtest.OpenDir(t, 0) // 0755 root's: not writable by nobody
	file := filepath.Join(root, "a-file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, record string
		uid          int
	}{
		{"a directory", root, 0},
		{"below a file", filepath.Join(file, "rec.json"), 0},
		{"in a directory the user cannot write", filepath.Join(root, "rec.json"), cmdtest.Nobody},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.uid != 0 && os.Geteuid() != 0 {
				t.Skip("needs root to run overlink as another user")
			}
			dir := cmdtest.OpenDir(t, c.uid)
			marker := filepath.Join(dir, "client-ran")
			r := cmdtest.Run(t, c.uid, dir, "-profile", "20:10", "-record", c.record, "--", "touch", marker)
			if r.Code != 2 || !strings.Contains(r.Stderr, "-record "+c.record) {
				t.Errorf("%v\nwant status 2 and a message naming -record %s", r, c.record)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("the client command ran although the record could not be written")
			}
		})
	}
}

// TestRecordFailureKeepsStatus: a record that cannot be written at the end
// (the client replaced its directory with a file) is reported on stderr,
// and the status is still the client's.
func TestRecordFailureKeepsStatus(t *testing.T) {
	shapedlinktest.Need(t)
	dir := cmdtest.OpenDir(t, 0)
	recDir := filepath.Join(dir, "records")
	r := cmdtest.Run(t, 0, dir, "-profile", "20:10", "-record", filepath.Join(recDir, "rec.json"),
		"--", "sh", "-c", `rm -rf "$1" && touch "$1"`, "sh", recDir)
	if r.Code != 0 || !strings.Contains(r.Stderr, "record was not written") {
		t.Errorf("%v\nwant the client's status 0 and the record's failure on stderr", r)
	}
}

// TestNoRecordByDefault: without -record nothing is written into the
// current directory; a one-line summary on stderr names -record.
func TestNoRecordByDefault(t *testing.T) {
	shapedlinktest.Need(t)
	dir := cmdtest.OpenDir(t, 0)
	r := cmdtest.Run(t, 0, dir, "-profile", "20:10", "--", "true")
	if r.Code != 0 || !strings.Contains(r.Stderr, "-record FILE") {
		t.Errorf("%v\nwant status 0 and a summary naming -record", r)
	}
	var files []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "cmd.test" { // the test binary copied there, if it was
			files = append(files, e.Name())
		}
	}
	if len(files) > 0 {
		t.Errorf("overlink wrote %v into its current directory without -record", files)
	}
}
