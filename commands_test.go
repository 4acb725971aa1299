package quicbench_test

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// takesArgs are the commands whose positional arguments are theirs to
// read (overlink's client command, summarise's work directories).
var takesArgs = map[string]bool{"overlink": true, "summarise": true}

// helpValueRE matches a flag line of flag.PrintDefaults that names its
// value's type: "  -name int", "  -name duration".
var helpValueRE = regexp.MustCompile(`^  -([^\s=]+) (int|uint|float|duration|value)\b`)

// helpBoolRE matches a boolean flag's line: the name alone.
var helpBoolRE = regexp.MustCompile(`^  -([^\s=]+)$`)

// badLines are command lines the command must refuse: a flag it does not
// have, a positional argument unless it takes them, and every flag with
// a typed value (number, duration, boolean) given one it cannot read.
func badLines(name, help string) [][]string {
	lines := [][]string{{"-no-such-flag"}, {"-no-such-flag=1"}}
	if !takesArgs[name] {
		lines = append(lines, []string{"stray-argument"})
	}
	for _, l := range strings.Split(help, "\n") {
		if m := helpValueRE.FindStringSubmatch(l); m != nil && m[2] != "value" {
			lines = append(lines, []string{"-" + m[1], "not-a-" + m[2]})
		}
		if m := helpBoolRE.FindStringSubmatch(l); m != nil {
			lines = append(lines, []string{"-" + m[1] + "=not-a-bool"})
		}
	}
	return lines
}

// TestBadCommandLines: every example command refuses a bad command line
// with exit status 2 and one line on stderr, starting with its name and
// naming what was wrong, and nothing on stdout: no usage dump, no
// stack, no second line.
func TestBadCommandLines(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: not building every command")
	}
	dirs, err := filepath.Glob("examples/*/main.go")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no commands under examples/: %v", err)
	}
	var names []string
	for _, d := range dirs {
		names = append(names, filepath.Base(filepath.Dir(d)))
	}
	sort.Strings(names)
	bin := t.TempDir()
	build := []string{"build", "-buildvcs=false", "-o", bin + string(filepath.Separator)}
	for _, n := range names {
		build = append(build, "./examples/"+n)
	}
	if out, err := exec.Command("go", build...).CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(build, " "), err, out)
	}
	for _, n := range names {
		t.Run(n, func(t *testing.T) {
			stdout, stderr, code := runCommand(t, filepath.Join(bin, n), "-h")
			if code != 0 {
				t.Fatalf("-h exited %d:\n%s%s", code, stdout, stderr)
			}
			for _, args := range badLines(n, stdout+stderr) {
				stdout, stderr, code := runCommand(t, filepath.Join(bin, n), args...)
				lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
				if code != 2 || stdout != "" || len(lines) != 1 || !strings.HasPrefix(lines[0], n+": ") {
					t.Errorf("%s %q: exit %d, stdout %q, stderr:\n%s\nwant exit 2, nothing on stdout and one line on stderr starting %q", n, args, code, stdout, stderr, n+": ")
				}
			}
		})
	}
}

// runCommand runs path with args in a directory of its own and returns
// its standard output and error and its exit status.
func runCommand(t *testing.T, path string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = t.TempDir()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return stdout.String(), stderr.String(), exit.ExitCode()
	case err != nil:
		t.Fatalf("%s %q: %v", path, args, err)
	}
	return stdout.String(), stderr.String(), 0
}
