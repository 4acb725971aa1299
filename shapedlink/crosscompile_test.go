package shapedlink

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCrossCompile builds shapedlink and the examples for a system without
// network namespaces (darwin/arm64), and vets shapedlink and builds its
// tests (the in-process link's, which run on every system, among them)
// for darwin, windows and freebsd, so that code importing the package
// keeps compiling off Linux: there BackendInProcess works, and New for
// the other backends and Reexec return errors wrapping
// errors.ErrUnsupported instead of being undefined.
func TestCrossCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command; skipped with -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	// The builds' only limit is the test binary's own (-timeout): on a busy
	// machine a cold cross-build of several platforms takes its time, and a
	// hang is what the limit is for.
	ctx, cancel := context.WithCancel(t.Context())
	if d, ok := t.Deadline(); ok {
		ctx, cancel = context.WithDeadline(t.Context(), d.Add(-30*time.Second))
	}
	defer cancel()
	out, err := exec.CommandContext(ctx, goBin, "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		t.Skip("not inside the module (go env GOMOD is empty)")
	}
	root := filepath.Dir(gomod)
	testBins := t.TempDir()
	for _, c := range []struct {
		goos, goarch string
		args         []string
	}{
		{"darwin", "arm64", []string{"build", "./shapedlink/...", "./examples/..."}},
		{"darwin", "arm64", []string{"vet", "./shapedlink/..."}},
		{"darwin", "arm64", []string{"test", "-c", "-o", testBins, "./shapedlink/...", "./transport/"}},
		{"windows", "amd64", []string{"vet", "./shapedlink/..."}},
		{"windows", "amd64", []string{"test", "-c", "-o", testBins, "./shapedlink/..."}},
		{"freebsd", "amd64", []string{"vet", "./shapedlink/..."}},
		{"freebsd", "amd64", []string{"test", "-c", "-o", testBins, "./shapedlink/..."}},
	} {
		cmd := exec.CommandContext(ctx, goBin, c.args...)
		cmd.Dir = root
		env := []string{"GOOS=" + c.goos, "GOARCH=" + c.goarch, "CGO_ENABLED=0"}
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s go %s: %v\n%s", strings.Join(env, " "), strings.Join(c.args, " "), err, out)
		}
	}
}
