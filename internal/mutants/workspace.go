package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// wholePackages are the packages whose tests run whole, for the
// unmutated check and for a mutant that names no package.
var wholePackages = []string{"stats", "gsocheck"}

// trees are copied into the work module: the packages above, the link's
// model (its pure tests need no namespace), the batch engines' scripts
// (measure/batch, whose tests need no engine), and what they import from
// this module (TestTreesHoldTheirImports checks the list is complete).
var trees = []string{"stats", "gsocheck", "shapedlink", "internal/proc", "internal/buildinfo", "internal/cli", "internal/hostcpu",
	"measure", "transport", "spicelike"}

// workspace is the work module the mutants are applied in, a fresh copy
// of the trees for each, and each test run's timeout.
type workspace struct {
	dir     string
	timeout time.Duration
}

// verdict is what became of one mutant.
type verdict int

const (
	wasKilled verdict = iota
	hasSurvived
	isStale
)

// fresh replaces the work module with a copy of the module's go.mod,
// go.sum and trees.
func (w workspace) fresh() error {
	if err := os.RemoveAll(w.dir); err != nil {
		return err
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		if err := copyFile(f, filepath.Join(w.dir, f)); err != nil {
			return err
		}
	}
	for _, p := range trees {
		if err := copyTree(p, filepath.Join(w.dir, p)); err != nil {
			return err
		}
	}
	return nil
}

// run runs the tests that must kill m (all of wholePackages for a mutant
// naming no package) in the work module, and says whether they passed,
// with their output.
func (w workspace) run(m mutant) (bool, string) {
	ctx, cancel := context.WithTimeout(context.Background(), w.timeout)
	defer cancel()
	args := []string{"test", "-count=1"}
	if m.pkg != "" {
		args = append(args, "-run", m.tests, "./"+m.pkg+"/")
	}
	for _, p := range wholePackages {
		if m.pkg == "" {
			args = append(args, "./"+p+"/")
		}
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = w.dir
	out, err := cmd.CombinedOutput()
	return err == nil, string(out)
}

// try applies m to a fresh copy, runs its tests and prints its line: a
// mutant whose text is not in its file exactly once, or that does not
// compile, is stale; one the tests pass with has survived.
func (w workspace) try(m mutant) (verdict, error) {
	if err := w.fresh(); err != nil {
		return 0, err
	}
	path := filepath.Join(w.dir, m.file)
	src, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	if n := bytes.Count(src, []byte(m.from)); n != 1 {
		fmt.Printf("STALE    %-50s %s: text found %d times, want once\n", m.name, m.file, n)
		return isStale, nil
	}
	src = bytes.Replace(src, []byte(m.from), []byte(m.to), 1)
	if err := os.WriteFile(path, src, 0o644); err != nil {
		return 0, err
	}
	ok, out := w.run(m)
	switch {
	case ok:
		fmt.Printf("SURVIVED %-50s %s\n", m.name, m.file)
		return hasSurvived, nil
	case strings.Contains(out, "build failed") || strings.Contains(out, "setup failed"):
		fmt.Printf("STALE    %-50s %s: the mutant does not compile\n%s", m.name, m.file, out)
		return isStale, nil
	default:
		fmt.Printf("killed   %-50s %s\n", m.name, m.file)
		return wasKilled, nil
	}
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o644)
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		return copyFile(p, filepath.Join(dst, rel))
	})
}
