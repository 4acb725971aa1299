package buildinfo

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

func TestStamped(t *testing.T) {
	set := func(kv ...string) []debug.BuildSetting {
		var s []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return s
	}
	for _, tc := range []struct {
		settings []debug.BuildSetting
		want     string
		ok       bool
	}{
		{set("vcs", "git", "vcs.revision", "abc123", "vcs.modified", "false"), "abc123", true},
		{set("vcs.revision", "abc123", "vcs.modified", "true"), "abc123+dirty", true},
		{set("-buildmode", "exe"), "", false},
		{nil, "", false},
	} {
		if got, ok := stamped(tc.settings); got != tc.want || ok != tc.ok {
			t.Errorf("stamped(%v) = %q, %v; want %q, %v", tc.settings, got, ok, tc.want, tc.ok)
		}
	}
}

// needGit skips where git cannot run.
func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skipf("no git here: %v", err)
	}
}

// run runs a command in dir or fails the test.
func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(gitEnv(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_SYSTEM=/dev/null")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// newCheckout makes a git checkout of a module named module with one
// commit, and returns its directory and the file inside it that stands
// for this package's source.
func newCheckout(t *testing.T, module string) (dir, file string) {
	t.Helper()
	needGit(t)
	dir = t.TempDir()
	file = filepath.Join(dir, "internal", "buildinfo", "buildinfo.go")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+module+"\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("package buildinfo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "git", "init", "-q")
	run(t, dir, "git", "add", ".")
	run(t, dir, "git", "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "one")
	return dir, file
}

// TestFromSource: the commit of the checkout the code was built from,
// "+dirty" once a tracked file differs and only then; refused, with the
// reason, for a path without a directory (-trimpath), another module
// than the main one, or no go.mod.
func TestFromSource(t *testing.T) {
	dir, file := newCheckout(t, "example.com/bench")
	head := run(t, dir, "git", "rev-parse", "HEAD")
	if got, err := fromSource(file, "example.com/bench"); err != nil || got != head {
		t.Errorf("a clean checkout: %q, %v; want %s", got, err, head)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("untracked"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := fromSource(file, "example.com/bench"); err != nil || got != head {
		t.Errorf("an untracked file: %q, %v; want %s (untracked files are not the code)", got, err, head)
	}
	if err := os.WriteFile(file, []byte("package buildinfo // changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := fromSource(file, "example.com/bench"); err != nil || got != head+"+dirty" {
		t.Errorf("a modified tracked file: %q, %v; want %s+dirty", got, err, head)
	}

	for name, tc := range map[string]struct{ file, module, want string }{
		"trimpath":       {"github.com/shakenfist/quicbench/internal/buildinfo/buildinfo.go", "github.com/shakenfist/quicbench", "-trimpath"},
		"another module": {file, "example.com/embedder", "not the main module example.com/embedder"},
		"no go.mod":      {filepath.Join(t.TempDir(), "a", "b.go"), "example.com/bench", "no go.mod"},
	} {
		if got, err := fromSource(tc.file, tc.module); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %q, %v; want an error saying %q", name, got, err, tc.want)
		}
	}
	notGit := t.TempDir()
	if err := os.WriteFile(filepath.Join(notGit, "go.mod"), []byte("module example.com/bench\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := fromSource(filepath.Join(notGit, "x.go"), "example.com/bench"); err == nil || !strings.Contains(err.Error(), "git rev-parse") {
		t.Errorf("a source directory outside any checkout: %q, %v; want git's refusal", got, err)
	}
	t.Setenv("PATH", "")
	if got, err := fromSource(file, "example.com/bench"); err == nil || !strings.Contains(err.Error(), "git") {
		t.Errorf("no git on PATH: %q, %v; want an error naming git", got, err)
	}
}

// TestReadUnderGoTest: go test stamps no commit, so Read asks git in this
// module's checkout and gets its HEAD, or says why not; never an empty
// commit without a reason.
func TestReadUnderGoTest(t *testing.T) {
	info := Read()
	t.Logf("%+v", info)
	if info.Module == "" || info.GoVersion == "" {
		t.Errorf("module %q, go %q", info.Module, info.GoVersion)
	}
	if (info.Commit == "") == (info.CommitMissing == "") {
		t.Fatalf("commit %q, missing %q: want exactly one", info.Commit, info.CommitMissing)
	}
	if Read() != info {
		t.Error("a second Read differs from the first")
	}
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Dir(filepath.Dir(filepath.Dir(file)))
	if _, err := exec.LookPath("git"); err != nil {
		return
	}
	head, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		if info.CommitMissing == "" {
			t.Errorf("git knows no HEAD in %s, yet the commit is %q", root, info.Commit)
		}
		return
	}
	if info.CommitSource != sourceGit || !strings.HasPrefix(info.Commit, strings.TrimSpace(string(head))) {
		t.Errorf("under go test in a checkout: commit %q from %q, want HEAD %s from git", info.Commit, info.CommitSource, head)
	}
}
