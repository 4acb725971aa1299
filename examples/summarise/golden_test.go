package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/shakenfist/quicbench/measure/report/reporttest"
)

var (
	update = flag.Bool("update", false, "rewrite the golden outputs under testdata from what summarise prints now")
	regen  = flag.Bool("regenerate-fixture", false,
		"rewrite the fixtures the -run selects: testdata/golden from reporttest.Golden, testdata/shapes from shapeFixtures (then rerun with -update)")
)

// goldenDir is the committed fixture: run.json files laid out as the matrix
// writes them. It is always passed by this relative path, so the source the
// report names is the same on every machine.
const goldenDir = "testdata/golden"

// TestGolden: summarise's markdown, JSON, plot index and plots (their
// SHA-256, see checkPlots) for the committed fixture are byte for byte
// what they were, and so is its -h. A change here is a change in what
// readers see; if it is meant, rerun with -update and read the diff.
func TestGolden(t *testing.T) {
	if *regen {
		if err := os.RemoveAll(goldenDir); err != nil {
			t.Fatal(err)
		}
		if err := reporttest.Write(goldenDir, reporttest.Golden()); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("markdown", func(t *testing.T) {
		out, _ := summariseOK(t, goldenDir)
		checkGolden(t, "testdata/golden.md", out)
	})
	t.Run("json", func(t *testing.T) {
		out, _ := summariseOK(t, "-json", goldenDir)
		checkGolden(t, "testdata/golden.json", out)
	})
	t.Run("plots", func(t *testing.T) {
		plots := t.TempDir()
		summariseOK(t, "-plots", plots, goldenDir)
		checkPlots(t, plots, "testdata/golden-plots")
	})
	t.Run("help", func(t *testing.T) {
		var out, errb bytes.Buffer
		if err := run(context.Background(), []string{"-h"}, &out, &errb); !errors.Is(err, flag.ErrHelp) {
			t.Fatalf("summarise -h: %v, want flag.ErrHelp", err)
		}
		checkGolden(t, "testdata/help.txt", append(out.Bytes(), errb.Bytes()...))
	})
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
