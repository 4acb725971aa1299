package main

import (
	"bytes"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// fixture is the analysis of testdata/mod, a module made to hold one
// case of each finding.
func fixture(t *testing.T) *Report {
	t.Helper()
	_, r, err := analyse("testdata/mod")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestFixtureFindings(t *testing.T) {
	r := fixture(t)

	sizes := map[string]Package{}
	for _, p := range r.Packages {
		sizes[p.Path] = p
	}
	if p := sizes["measure/big"]; p.Files != 16 || !p.TooLarge {
		t.Errorf("measure/big: %d files, too large %v; want 16, true", p.Files, p.TooLarge)
	}
	if p := sizes["lib"]; p.Files != 4 || p.TooLarge || p.Exported != 21 {
		t.Errorf("lib: %d files, too large %v, %d exported; want 4, false, 21", p.Files, p.TooLarge, p.Exported)
	}

	var unused []string
	notes := map[string]string{}
	for _, u := range r.Unused {
		unused = append(unused, u.Package+" "+u.Name)
		notes[u.Name] = u.Note
	}
	want := []string{
		"helper Spare",         // in a package only tests import, used by none
		"internal/inner Shown", // named only by its Example, in an internal package
		"lib Limit",            // used only by lib's own tests
		"lib Mode",             // a type nothing uses
		"lib ModeX",            // a value of it
		"lib NotShown",         // named in an Example file outside what go doc shows
		"lib OnlyOtherTests",   // used only by app's tests
		"lib T.Extra",          // a method no interface needs
		"lib Unused",           // used only inside lib
		"measure/uses Call",
	}
	// Not reported: lib.Used and lib.T (named by app), lib.Returned (what
	// Used returns), T.String (fmt.Stringer), T.Unwrap (errors.Unwrap), Impl.Do (app's Doer),
	// gen.Generated (generated), app.Helper (a command's), lib.ByNested
	// (used by the nested module's command), helper.Assist (used by
	// app's tests, and only tests import helper), lib.Shown (named by
	// lib's Example, and lib is importable from outside the module),
	// lib.Whole (named in the init of a whole-file Example), lib.Made
	// (what ShownMakes, named by lib's Example, returns),
	// inner.Kind (the type of Returned's K), lib.Kind (its spelling in
	// lib), inner.KindA and lib.KindB (values of it).
	if !reflect.DeepEqual(unused, want) {
		t.Errorf("unused exports:\n got %q\nwant %q", unused, want)
	}
	if notes["OnlyOtherTests"] != "used only by other packages' tests" {
		t.Errorf("OnlyOtherTests's note is %q", notes["OnlyOtherTests"])
	}
	if notes["Shown"] != "named only in its own Examples" {
		t.Errorf("inner.Shown's note is %q", notes["Shown"])
	}

	wantComments := []Comment{{File: "lib/long.go", Line: 19, Lines: 15, Anchor: "long"}}
	if !reflect.DeepEqual(r.Comments, wantComments) {
		t.Errorf("long comments:\n got %+v\nwant %+v", r.Comments, wantComments)
	}

	wantFuncs := []Func{{File: "lib/funcs.go", Line: 7, Lines: 101, Name: "longs.long101"}}
	if !reflect.DeepEqual(r.Funcs, wantFuncs) {
		t.Errorf("long functions:\n got %+v\nwant %+v", r.Funcs, wantFuncs)
	}

	for _, fl := range r.Files {
		if fl.Package != "files" {
			continue
		}
		if fl.Arrows != 3 || len(fl.BackUp) != 1 || fl.Floors != 2 {
			t.Errorf("files: %d arrows, %d back up, %d floors; want 3, 1, 2", fl.Arrows, len(fl.BackUp), fl.Floors)
		}
		if len(fl.BackUp) == 1 && fl.BackUp[0].Names[0] != "a" && fl.BackUp[0].Names[0] != "b" {
			t.Errorf("files: the arrow back up is %+v; want one between a.go and b.go", fl.BackUp[0])
		}
	}

	for _, l := range r.Levels {
		switch l.Dir {
		case ".":
			// lib imports measure/big and internal/inner, and
			// measure/uses imports lib.
			if len(l.Rooms) != 7 || l.Imports != 4 || len(l.BackUp) != 1 {
				t.Errorf("root: %d rooms, %d imports, %d back up; want 7, 4, 1", len(l.Rooms), l.Imports, len(l.BackUp))
			}
		case "measure":
			if len(l.BackUp) != 0 {
				t.Errorf("measure: %d imports back up, want 0", len(l.BackUp))
			}
		}
	}
}

func TestFilesFlag(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"-C", "testdata/mod", "-files", "./files"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.HasPrefix(out.String(), "files: 3 files (this system's build) on 2 floors, 3 arrows, 1 back up\n") {
		t.Errorf("-files printed:\n%s", out.String())
	}
	out.Reset()
	errb.Reset()
	if code := run([]string{"-C", "testdata/mod", "-files", "./nothing"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "not a package") {
		t.Errorf("-files ./nothing: exit %d, stderr %q; want 2 naming the mistake", code, errb.String())
	}
}

func TestCheckRatchet(t *testing.T) {
	dir := t.TempDir()
	check := func(known string) (int, string) {
		t.Helper()
		name := filepath.Join(dir, "known.txt")
		if err := os.WriteFile(name, []byte(known), 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errb bytes.Buffer
		code := run([]string{"-C", "testdata/mod", "-check", name}, &out, &errb)
		return code, out.String() + errb.String()
	}
	var out, errb bytes.Buffer
	if code := run([]string{"-C", "testdata/mod", "-known"}, &out, &errb); code != 0 {
		t.Fatalf("-known: exit %d: %s", code, errb.String())
	}
	all := out.String()
	for _, line := range []string{"files measure/big 16", "unused lib T.Extra", "comment lib/long.go@long 15", "long lib/funcs.go@longs.long101 101", "imports-up . 1"} {
		if !strings.Contains(all, line+"\n") {
			t.Errorf("-known lacks %q:\n%s", line, all)
		}
	}

	if code, msg := check(all); code != 0 {
		t.Errorf("every violation known: exit %d\n%s", code, msg)
	}
	// A known violation fixed is fine, and said.
	if code, msg := check(all + "unused lib Gone\n"); code != 0 || !strings.Contains(msg, "gone (remove it from") {
		t.Errorf("a fixed violation: exit %d\n%s", code, msg)
	}
	// A violation missing from the list is new.
	code, msg := check(strings.Replace(all, "unused lib T.Extra\n", "", 1))
	if code != 1 || !strings.Contains(msg, "NEW: unused lib T.Extra\n") {
		t.Errorf("a new violation: exit %d\n%s", code, msg)
	}
	// A violation larger than known is new.
	code, msg = check(strings.Replace(all, "files measure/big 16", "files measure/big 15", 1))
	if code != 1 || !strings.Contains(msg, "NEW: files measure/big 16 (known at 15)") {
		t.Errorf("a grown violation: exit %d\n%s", code, msg)
	}
	// A list that is not one is refused.
	if code, msg := check("unused lib\n"); code != 2 || !strings.Contains(msg, "line 1") {
		t.Errorf("a bad list: exit %d\n%s", code, msg)
	}
	if code, msg := check("files measure/big many\n"); code != 2 || !strings.Contains(msg, "not a positive number") {
		t.Errorf("a bad size: exit %d\n%s", code, msg)
	}
}

func TestUsage(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"-h"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "-check file") {
		t.Errorf("-h: exit %d, printed %q", code, out.String())
	}
	out.Reset()
	if code := run([]string{"-files", "x", "-known"}, &out, &errb); code != 2 {
		t.Errorf("-files with -known: exit %d, want 2", code)
	}
	if code := run([]string{"-check", "/nonexistent/known.txt"}, &out, &errb); code != 2 {
		t.Errorf("-check of a missing file: exit %d, want 2", code)
	}
}

// TestLayerLeast compares the layering's arrows back up with the least
// found by trying every order, on random graphs.
func TestLayerLeast(t *testing.T) {
	rng := rand.New(rand.NewSource(57))
	for trial := 0; trial < 200; trial++ {
		n := 2 + rng.Intn(6)
		g := newGraph(n)
		for a := 0; a < n; a++ {
			for b := 0; b < n; b++ {
				if a != b && rng.Intn(3) == 0 {
					g.add(a, b, 1+rng.Intn(2))
				}
			}
		}
		least := 1 << 30
		perm := make([]int, n)
		for i := range perm {
			perm[i] = i
		}
		permute(perm, 0, func(p []int) { least = min(least, cost(g, p)) })
		l := layer(g)
		if l.UpWeight != least {
			t.Fatalf("trial %d: %d back up, the least is %d (graph %v)", trial, l.UpWeight, least, g.w)
		}
		// The heuristic for large circles must find an order no worse
		// than it was given and count it right.
		all := make([]int, n)
		for i := range all {
			all[i] = i
		}
		if h := cost(g, improve(g, greedyOrder(g, all))); h < least {
			t.Fatalf("trial %d: the heuristic claims %d, below the least %d", trial, h, least)
		}
		for _, a := range l.Up {
			if g.w[a[0]][a[1]] == 0 {
				t.Fatalf("trial %d: %v is not an arc", trial, a)
			}
		}
		for a := 0; a < n; a++ {
			for b := range g.w[a] {
				up := false
				for _, u := range l.Up {
					up = up || u == [2]int{a, b}
				}
				if !up && l.Floor[a] <= l.Floor[b] {
					t.Fatalf("trial %d: %d uses %d but stands on floor %d, not above %d", trial, a, b, l.Floor[a], l.Floor[b])
				}
			}
		}
	}
}

func permute(p []int, k int, f func([]int)) {
	if k == len(p) {
		f(p)
		return
	}
	for i := k; i < len(p); i++ {
		p[k], p[i] = p[i], p[k]
		permute(p, k+1, f)
		p[k], p[i] = p[i], p[k]
	}
}

// TestModuleKnown checks the module itself against known.txt: a
// violation of the layout rules that is not listed there fails.
func TestModuleKnown(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the module's analysis takes 10-20 s (more with a cold build cache)")
	}
	start := time.Now()
	var out, errb bytes.Buffer
	if code := run([]string{"-C", "../..", "-check", "known.txt"}, &out, &errb); code != 0 {
		t.Errorf("exit %d:\n%s%s", code, out.String(), errb.String())
	}
	t.Logf("%s(%.1fs)", out.String(), time.Since(start).Seconds())
}
