package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestTreesHoldTheirImports: every package of this module that the
// mutants' tests build (wholePackages and each mutant's package, with
// their tests' imports) is in a copied tree, so that the tests build in
// the work module rather than every mutant of a package being reported
// stale.
func TestTreesHoldTheirImports(t *testing.T) {
	const module = "github.com/shakenfist/quicbench"
	args := []string{"list", "-deps", "-test", "-f", "{{.ImportPath}}"}
	tested := map[string]bool{}
	for _, p := range wholePackages {
		tested[p] = true
	}
	for _, m := range modelMutants {
		tested[m.pkg] = true
	}
	for p := range tested {
		args = append(args, "./"+p+"/")
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = "../.." // the module root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go %s: %v", strings.Join(args, " "), err)
	}
	missing := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		// A test's variant of a package reads "pkg [pkg.test]", its
		// main package "pkg.test" and an external test package
		// "pkg_test".
		pkg, _, _ := strings.Cut(line, " ")
		pkg = strings.TrimSuffix(strings.TrimSuffix(pkg, ".test"), "_test")
		if pkg != module && !strings.HasPrefix(pkg, module+"/") {
			continue // the standard library or another module
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
		copied := false
		for _, tree := range trees {
			copied = copied || rel == tree || strings.HasPrefix(rel, tree+"/")
		}
		if !copied {
			missing[pkg] = true
		}
	}
	for pkg := range missing {
		t.Errorf("the copied trees import %s, which is not copied: add its directory to trees", pkg)
	}
}

// TestEditsApply: every edit names a file of the module that holds its
// pattern exactly once, so that moving or changing the code a mutant
// breaks fails here rather than when the mutants run.
func TestEditsApply(t *testing.T) {
	all := append([]edit(nil), mutants...)
	for _, m := range modelMutants {
		all = append(all, m.edit)
	}
	for _, e := range all {
		b, err := os.ReadFile(filepath.Join("../..", e.file))
		if err != nil {
			t.Errorf("%s: %v", e.name, err)
			continue
		}
		if n := strings.Count(string(b), e.from); n != 1 {
			t.Errorf("%s: %s holds its pattern %d times, want once", e.name, e.file, n)
		}
	}
}
