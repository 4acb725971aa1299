package buildinfo

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

// Info is which code a process is.
type Info struct {
	// Module is the main module's path, Version its version ("(devel)"
	// for a build from a checkout) and GoVersion the toolchain's.
	Module    string `json:"module"`
	Version   string `json:"version"`
	GoVersion string `json:"go_version"`
	// Commit is the revision the code was built from, with "+dirty" when
	// tracked files differed from it; empty when it could not be found.
	Commit string `json:"commit"`
	// CommitSource is where Commit came from: sourceBuildInfo or
	// sourceGit; empty with Commit.
	CommitSource string `json:"commit_source,omitempty"`
	// CommitMissing says why Commit is empty; empty when it is not.
	CommitMissing string `json:"commit_missing,omitempty"`
}

// Where a commit came from.
const (
	// sourceBuildInfo: the toolchain stamped it into the binary
	// (vcs.revision and vcs.modified).
	sourceBuildInfo = "buildinfo"
	// sourceGit: git, asked in the source directory the code was built
	// from.
	sourceGit = "git"
)

// gitTimeout bounds each git command.
const gitTimeout = 10 * time.Second

// Read says which code this process is. The first call may run git
// (twice, a few milliseconds); every later call returns the same answer.
var Read = sync.OnceValue(read)

func read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{GoVersion: runtime.Version(), CommitMissing: "the binary carries no build information (built without module support)"}
	}
	info := Info{Module: bi.Main.Path, Version: bi.Main.Version, GoVersion: bi.GoVersion}
	if rev, ok := stamped(bi.Settings); ok {
		info.Commit, info.CommitSource = rev, sourceBuildInfo
		return info
	}
	_, file, _, _ := runtime.Caller(0)
	commit, err := fromSource(file, bi.Main.Path)
	if err != nil {
		info.CommitMissing = "the build has no commit stamp (go run, go test and -buildvcs=false make none) and " + err.Error()
		return info
	}
	info.Commit, info.CommitSource = commit, sourceGit
	return info
}

// stamped is the commit the toolchain stamped into the build, "+dirty"
// when it saw modified files.
func stamped(settings []debug.BuildSetting) (string, bool) {
	var rev, modified string
	for _, s := range settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value
		}
	}
	if rev == "" {
		return "", false
	}
	if modified == "true" {
		rev += "+dirty"
	}
	return rev, true
}

// fromSource asks git for the commit of the source directory that file,
// a path the compiler recorded, lies in, provided that directory is the
// module mainModule.
func fromSource(file, mainModule string) (string, error) {
	if file == "" || !filepath.IsAbs(file) {
		return "", fmt.Errorf("the source directory is unknown (built with -trimpath: %q)", file)
	}
	root, module, err := moduleRoot(filepath.Dir(file))
	if err != nil {
		return "", err
	}
	if module != mainModule {
		return "", fmt.Errorf("the source directory found, %s, is module %s, not the main module %s", root, module, mainModule)
	}
	return gitCommit(root)
}

// moduleRoot is the nearest directory at or above dir holding go.mod,
// and the module that file names.
func moduleRoot(dir string) (root, module string, err error) {
	for d := dir; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil {
			if m := modulePath(b); m != "" {
				return d, m, nil
			}
			return "", "", fmt.Errorf("%s names no module", filepath.Join(d, "go.mod"))
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", "", fmt.Errorf("the source directory's go.mod cannot be read: %v", err)
		}
		if filepath.Dir(d) == d {
			return "", "", fmt.Errorf("no go.mod at or above %s, where the code was built (the source is gone or moved)", dir)
		}
	}
}

// modulePath is the path on go.mod's module line.
func modulePath(gomod []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// gitCommit is HEAD of the checkout holding dir, with "+dirty" when
// tracked files differ from it (untracked files do not count). Git runs
// with its optional locks off, so it writes nothing, and with no
// filesystem monitor, so no command from the checkout's configuration
// runs.
func gitCommit(dir string) (string, error) {
	head, err := git(dir, "rev-parse", "--verify", "HEAD")
	if err != nil {
		return "", err
	}
	status, err := git(dir, "status", "--porcelain", "--untracked-files=no")
	if err != nil {
		return "", err
	}
	if status != "" {
		head += "+dirty"
	}
	return head, nil
}

// git runs git with args in dir and returns its output, trimmed.
func git(dir string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "core.fsmonitor=false"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(gitEnv(), "GIT_OPTIONAL_LOCKS=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		why := strings.TrimSpace(stderr.String())
		if why == "" {
			why = err.Error()
		}
		return "", fmt.Errorf("git %s in %s failed: %s", strings.Join(args, " "), dir, why)
	}
	return strings.TrimSpace(string(out)), nil
}

// gitEnv is the environment without what would point git at another
// repository than the one around its directory.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OPTIONAL_LOCKS":
		default:
			env = append(env, kv)
		}
	}
	return env
}
