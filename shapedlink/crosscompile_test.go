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
// network namespaces (darwin/arm64), and vets shapedlink there, so that code
// importing the package keeps compiling off Linux: there New and Reexec
// return errors wrapping errors.ErrUnsupported instead of being undefined.
func TestCrossCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command; skipped with -short")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
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
	for _, args := range [][]string{
		{"build", "./shapedlink/...", "./examples/..."},
		{"vet", "./shapedlink/..."},
	} {
		cmd := exec.CommandContext(ctx, goBin, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}
