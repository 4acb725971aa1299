package measure_test

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestArmFromAnotherModule builds testdata/armoutside, a module of its own
// that defines and registers a TCP arm and a QUIC arm and an axis with its
// command (two non-test files), runs small matrices of them beside the
// built-in arms through package bench, as an importer's code would, and
// runs its tests as root: they must pass, not skip.
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
	src, root := t.TempDir(), filepath.Join("..")
	root, err = filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	copyOutside(t, src, root)
	bin := filepath.Join(t.TempDir(), "armoutside.test")
	build := exec.Command(goBin, "test", "-c", "-o", bin, ".")
	build.Dir = src
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the outside module: %v\n%s", err, out)
	}
	// Its command, with the module's own axis as a flag.
	cmdBin := filepath.Join(t.TempDir(), "echosizes")
	build = exec.Command(goBin, "build", "-o", cmdBin, "./cmd/echosizes")
	build.Dir = src
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the outside module's command: %v\n%s", err, out)
	}
	if out, err := exec.Command(cmdBin, "-h").CombinedOutput(); err != nil || !strings.Contains(string(out), "-echo-sizes") {
		t.Errorf("echosizes -h: %v, want a usage naming -echo-sizes:\n%s", err, out)
	}
	cmd := exec.Command(bin, "-test.v", "-test.count=1")
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	for _, test := range []string{"TestOwnArmInAMatrix", "TestOwnQUICArm", "TestOwnAxisInAMatrix"} {
		if !strings.Contains(string(out), "--- PASS: "+test) {
			t.Errorf("the outside module's %s did not pass", test)
		}
	}
	if err != nil || t.Failed() {
		t.Errorf("the outside module's test: %v\n%s", err, out)
	}
}

// copyOutside copies testdata/armoutside into dst, its replace directive
// pointed at root (this checkout) and with root's go.sum (its dependencies
// are a subset of ours), so that resolving them writes nothing into the
// repository.
func copyOutside(t *testing.T, dst, root string) {
	t.Helper()
	from := filepath.Join("testdata", "armoutside")
	err := filepath.WalkDir(from, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(from, path)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if rel == "go.mod" {
			b = []byte(strings.Replace(string(b), "=> ../../..", "=> "+root, 1))
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err == nil {
		var sum []byte
		if sum, err = os.ReadFile(filepath.Join(root, "go.sum")); err == nil {
			err = os.WriteFile(filepath.Join(dst, "go.sum"), sum, 0o644)
		}
	}
	if err != nil {
		t.Fatalf("copying the outside module: %v", err)
	}
}
