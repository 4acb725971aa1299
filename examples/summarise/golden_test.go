package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/shakenfist/quicbench/examples/internal/report/reporttest"
)

var (
	update = flag.Bool("update", false, "rewrite the golden outputs under testdata from what summarise prints now")
	regen  = flag.Bool("regenerate-fixture", false,
		"rewrite the fixture results directory testdata/golden from reporttest.Golden (then rerun with -update)")
)

// goldenDir is the committed fixture: run.json files laid out as the matrix
// writes them. It is always passed by this relative path, so the source the
// report names is the same on every machine.
const goldenDir = "testdata/golden"

// TestGolden: summarise's markdown, JSON and plot index for the committed
// fixture are byte for byte what they were. A change here is a change in
// what readers see; if it is meant, rerun with -update and read the diff.
func TestGolden(t *testing.T) {
	if *regen {
		if err := os.RemoveAll(goldenDir); err != nil {
			t.Fatal(err)
		}
		if err := reporttest.Write(goldenDir, reporttest.Golden()); err != nil {
			t.Fatal(err)
		}
	}
	plots := t.TempDir()
	for _, tc := range []struct {
		name, golden string
		args         []string
		output       func() ([]byte, error)
	}{
		{"markdown", "golden.md", []string{goldenDir}, nil},
		{"json", "golden.json", []string{"-json", goldenDir}, nil},
		{"plot index", "golden-plots.md", []string{"-plots", plots, goldenDir}, func() ([]byte, error) {
			return os.ReadFile(filepath.Join(plots, "plots.md"))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if err := run(context.Background(), tc.args, &out, &errb); err != nil {
				t.Fatalf("summarise %v: %v\n%s", tc.args, err, errb.String())
			}
			got := out.Bytes()
			if tc.output != nil {
				b, err := tc.output()
				if err != nil {
					t.Fatal(err)
				}
				got = b
			}
			path := filepath.Join("testdata", tc.golden)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("summarise %v differs from %s:\n%s", tc.args, path, firstDiff(want, got))
			}
		})
	}
}

// firstDiff shows the first line where got departs from want.
func firstDiff(want, got []byte) string {
	wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if !bytes.Equal(w, g) {
			return fmt.Sprintf("line %d:\n want: %s\n  got: %s", i+1, w, g)
		}
	}
	return "(same lines, different bytes)"
}
