package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/report/render"
)

// shapesGolden holds what summarise prints for each fixture in shapesDir.
const shapesGolden = "testdata/shapes.golden"

// TestGoldenShapes: for every experiment's fixture under testdata/shapes
// (ccarm, sessions, cpucost with kept offload on the emulator and on
// netem, a scheduled link, profile options, two hosts, two shards),
// summarise's markdown, what it says on stderr (runs ignored, runs a
// merge lacks) and its JSON are byte for byte what testdata/shapes.golden
// holds; so are the plot index and every plot's SHA-256 for the scheduled
// link, whose timeline plots nothing else draws. -update rewrites the
// golden files; -regenerate-fixture rewrites the fixtures first.
func TestGoldenShapes(t *testing.T) {
	if *regen {
		if err := writeShapes(); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range shapeFixtures() {
		dirs := []string{filepath.Join(shapesDir, f.name)}
		if f.shards > 1 {
			dirs = nil
			for s := range f.shards {
				dirs = append(dirs, filepath.Join(shapesDir, f.name, fmt.Sprintf("shard-%d", s)))
			}
		}
		t.Run(f.name, func(t *testing.T) {
			out, errOut := summariseOK(t, dirs...)
			checkGolden(t, filepath.Join(shapesGolden, f.name+".md"), out)
			checkGolden(t, filepath.Join(shapesGolden, f.name+".stderr"), errOut)
			out, _ = summariseOK(t, append([]string{"-json"}, dirs...)...)
			checkGolden(t, filepath.Join(shapesGolden, f.name+".json"), out)
		})
	}
	t.Run("warmup override", func(t *testing.T) {
		out, _ := summariseOK(t, "-warmup", "2s", filepath.Join(shapesDir, "ccarm"))
		checkGolden(t, filepath.Join(shapesGolden, "ccarm-warmup2s.md"), out)
	})
	t.Run("timevarying plots", func(t *testing.T) {
		plots := t.TempDir()
		summariseOK(t, "-plots", plots, filepath.Join(shapesDir, "timevarying"))
		checkPlots(t, plots, filepath.Join(shapesGolden, "timevarying-plots"))
	})
}

// summariseOK runs summarise with args and returns its stdout and stderr,
// failing the test if it fails.
func summariseOK(t *testing.T, args ...string) (stdout, stderr []byte) {
	t.Helper()
	var out, errb bytes.Buffer
	if err := run(context.Background(), args, &out, &errb); err != nil {
		t.Fatalf("summarise %v: %v\n%s", args, err, errb.String())
	}
	return out.Bytes(), errb.Bytes()
}

// checkGolden compares got with the golden file at path, or with -update
// writes it there.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./examples/summarise -run Golden -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what the test got:\n%s", path, firstDiff(want, got))
	}
}

// checkPlots pins a plot directory: its index (golden+".md") and the
// SHA-256 of every other file (golden+".sha256"). The hashes are compared
// only on amd64 without FMA (GOAMD64 v1 or v2): where the compiler fuses
// multiply-adds, gonum/plot's coordinates, and so the bytes, may differ in
// the last place.
func checkPlots(t *testing.T, dir, golden string) {
	t.Helper()
	index, err := os.ReadFile(filepath.Join(dir, render.PlotIndex))
	if err != nil {
		t.Fatal(err)
	}
	checkGolden(t, golden+".md", index)
	var sums bytes.Buffer
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == render.PlotIndex {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		fmt.Fprintf(&sums, "%x  %s\n", sha256.Sum256(b), filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if why := plotBytesUnpinned(); why != "" {
		t.Logf("plot hashes not compared: %s", why)
		return
	}
	checkGolden(t, golden+".sha256", sums.Bytes())
	if t.Failed() && !*update {
		// dir goes with the test; keep the plots for a look.
		keep, err := os.MkdirTemp("", "summarise-plots-")
		if err == nil {
			err = os.CopyFS(keep, os.DirFS(dir))
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("the plots as drawn now are in %s", keep)
	}
}

// plotBytesUnpinned says why plots' bytes cannot be compared here, or ""
// when they can.
func plotBytesUnpinned() string {
	if runtime.GOARCH != "amd64" {
		return "GOARCH " + runtime.GOARCH + " may fuse multiply-adds"
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "GOAMD64" && s.Value != "v1" && s.Value != "v2" {
				return "GOAMD64 " + s.Value + " may fuse multiply-adds"
			}
		}
	}
	return ""
}

// docsResults is where the committed experiments' summaries are, from
// this package's directory.
const docsResults = "../../docs/results"

// docsGolden holds, for a docs/results summary whose re-rendering is
// meant to differ from the summary.md committed beside it, the rendering
// to expect instead; and docsGolden/index.txt lists what was rendered.
const docsGolden = "testdata/docs-results.golden"

// TestGoldenDocsResults: every summary.json under docs/results that
// report.Report reads (every one but pathchange's, which is that
// command's own table) decodes with no field unknown, encodes back to
// every value it holds (fields added since it was written may join them),
// and renders byte for byte as the summary.md committed
// beside it (or as docsGolden's copy, where a difference was pinned).
// -update writes docsGolden's copies where the rendering differs and
// removes them where it no longer does; it never touches docs/.
func TestGoldenDocsResults(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(docsResults, "*", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no summary.json under %s", docsResults)
	}
	var index bytes.Buffer
	for _, p := range paths {
		name := filepath.Base(filepath.Dir(p))
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if b := bytes.TrimSpace(raw); len(b) > 0 && b[0] == '[' {
			fmt.Fprintf(&index, "%s: not a report (a list: the pathchange command's rows)\n", name)
			continue
		}
		t.Run(name, func(t *testing.T) {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			var rep report.Report
			if err := dec.Decode(&rep); err != nil {
				t.Fatalf("%s no longer reads as a report: %v", p, err)
			}
			var again bytes.Buffer
			if err := rep.WriteJSON(&again); err != nil {
				t.Fatal(err)
			}
			if where := missingFrom(jsonValue(t, raw), jsonValue(t, again.Bytes()), ""); where != "" {
				t.Errorf("%s does not encode back to what it holds: %s", p, where)
			}
			var md bytes.Buffer
			if err := render.WriteMarkdown(&md, &rep); err != nil {
				t.Fatal(err)
			}
			committed := filepath.Join(filepath.Dir(p), "summary.md")
			pinned := filepath.Join(docsGolden, name+".md")
			beside, err := os.ReadFile(committed)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.Fatal(err)
			}
			same := err == nil && bytes.Equal(md.Bytes(), beside)
			if *update {
				if same {
					if err := os.Remove(pinned); err != nil && !errors.Is(err, fs.ErrNotExist) {
						t.Fatal(err)
					}
				} else {
					checkGolden(t, pinned, md.Bytes())
				}
			}
			switch want, err := os.ReadFile(pinned); {
			case err == nil:
				fmt.Fprintf(&index, "%s: rendered; differs from its summary.md, pinned in %s.md\n", name, name)
				if !bytes.Equal(md.Bytes(), want) {
					t.Errorf("%s renders differently from %s:\n%s", p, pinned, firstDiff(want, md.Bytes()))
				}
			case !errors.Is(err, fs.ErrNotExist):
				t.Fatal(err)
			case beside == nil:
				t.Errorf("%s has no summary.md beside it and no rendering pinned in %s (run with -update)", p, pinned)
			default:
				fmt.Fprintf(&index, "%s: rendered; same as its summary.md\n", name)
				if !same {
					t.Errorf("%s renders differently from %s (if meant, pin it with -update):\n%s", p, committed, firstDiff(beside, md.Bytes()))
				}
			}
		})
	}
	checkGolden(t, filepath.Join(docsGolden, "index.txt"), index.Bytes())
}

// jsonValue decodes JSON into generic values, numbers as written.
func jsonValue(t *testing.T, b []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// missingFrom returns where a value in have (decoded JSON) is not in
// again, or "" when each one is: again may hold more (fields added since
// have was written, with zero values), but not less or other.
func missingFrom(have, again any, at string) string {
	switch h := have.(type) {
	case map[string]any:
		a, ok := again.(map[string]any)
		if !ok {
			return fmt.Sprintf("%s: an object became %v", at, again)
		}
		for k, v := range h {
			if _, ok := a[k]; !ok {
				return fmt.Sprintf("%s.%s is gone", at, k)
			}
			if w := missingFrom(v, a[k], at+"."+k); w != "" {
				return w
			}
		}
	case []any:
		a, ok := again.([]any)
		if !ok || len(a) != len(h) {
			return fmt.Sprintf("%s: a list of %d became %v", at, len(h), again)
		}
		for i := range h {
			if w := missingFrom(h[i], a[i], fmt.Sprintf("%s[%d]", at, i)); w != "" {
				return w
			}
		}
	default:
		if !reflect.DeepEqual(have, again) {
			return fmt.Sprintf("%s: %v became %v", at, have, again)
		}
	}
	return ""
}
