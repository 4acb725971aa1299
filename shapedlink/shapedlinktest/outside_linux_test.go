package shapedlinktest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
)

// TestFromAnotherModule builds testdata/outside, a module of its own that
// imports shapedlink, shapedlinktest and measure as a user's code would,
// and runs its HTTP-over-the-link and workload-over-the-link tests as root
// and as an unprivileged user (where user namespaces are allowed): they
// must pass, not skip, in both.
func TestFromAnotherModule(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a separate module; skipped with -short")
	}
	shapedlinktest.Need(t)
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH to build the outside module with")
	}
	dir := openDir(t)
	bin := filepath.Join(dir, "outside.test")
	// Build a copy, its replace directive pointed at this checkout, so that
	// resolving its dependencies writes nothing into the repository.
	src := t.TempDir()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"go.mod", "go.sum", "outside_test.go"} {
		b, err := os.ReadFile(filepath.Join("testdata", "outside", name))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if name == "go.mod" {
			b = []byte(strings.Replace(string(b), "=> ../../../..", "=> "+root, 1))
		}
		if err := os.WriteFile(filepath.Join(src, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	build := exec.Command(goBin, "test", "-c", "-o", bin, ".")
	build.Dir = src
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the outside module: %v\n%s", err, out)
	}
	users := []uint32{0}
	if os.Geteuid() == 0 && userNamespacesAllowed() {
		users = append(users, 65534)
	}
	for _, uid := range users {
		cmd := exec.Command(bin, "-test.v", "-test.count=1")
		cmd.Dir = dir
		if uid != 0 {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
		}
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestHTTPOverALink") || !strings.Contains(string(out), "--- PASS: TestWorkloadOverALink") {
			t.Errorf("as uid %d: %v\n%s", uid, err, out)
		}
	}
}

// openDir is a temporary directory any user can enter.
func openDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "shapedlinktest-outside-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// userNamespacesAllowed is what the sysctls say about unprivileged user
// namespaces.
func userNamespacesAllowed() bool {
	for _, s := range []struct{ path, off string }{
		{"/proc/sys/user/max_user_namespaces", "0"},
		{"/proc/sys/kernel/unprivileged_userns_clone", "0"},
		{"/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1"},
	} {
		if b, err := os.ReadFile(s.path); err == nil && strings.TrimSpace(string(b)) == s.off {
			return false
		}
	}
	return true
}
