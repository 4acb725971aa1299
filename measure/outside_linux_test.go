package measure_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestArmFromAnotherModule builds testdata/armoutside, a module of its own
// that defines and registers a TCP arm and a QUIC arm and runs one-cell
// matrices of them beside the tcp arm through package bench, as an
// importer's code would, and runs its tests as root: they must pass, not
// skip.
func TestArmFromAnotherModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a separate module and runs a matrix; skipped with -short")
	}
	if os.Geteuid() != 0 {
		t.Skip("the outside module's matrix builds network namespaces, which needs root")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to build the outside module with")
	}
	// Build a copy, its replace directive pointed at this checkout and with
	// this module's go.sum (its dependencies are a subset of ours), so that
	// resolving them writes nothing into the repository.
	src, root := t.TempDir(), filepath.Join("..")
	root, err = filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct{ from, to string }{
		{filepath.Join("testdata", "armoutside", "go.mod"), "go.mod"},
		{filepath.Join("testdata", "armoutside", "outside_test.go"), "outside_test.go"},
		{filepath.Join(root, "go.sum"), "go.sum"},
	} {
		b, err := os.ReadFile(f.from)
		if err != nil {
			t.Fatal(err)
		}
		if f.to == "go.mod" {
			b = []byte(strings.Replace(string(b), "=> ../../..", "=> "+root, 1))
		}
		if err := os.WriteFile(filepath.Join(src, f.to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(t.TempDir(), "armoutside.test")
	build := exec.Command(goBin, "test", "-c", "-o", bin, ".")
	build.Dir = src
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the outside module: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-test.v", "-test.count=1")
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestOwnArmInAMatrix") || !strings.Contains(string(out), "--- PASS: TestOwnQUICArm") {
		t.Errorf("the outside module's test: %v\n%s", err, out)
	}
}
