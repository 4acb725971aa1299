package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRefusals: each bad command line is one line on stderr and status 2.
func TestRefusals(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-shards", "2", "stray"}, `unexpected arguments ["stray"]: put the matrix command's flags after --`},
		{[]string{"-shards", "2", "-do", "sbatch"}, `-do "sbatch": give one of`},
		{[]string{"-do", "slurm"}, "-shards: give the number of shards"},
		{[]string{"-shards", "2", "-command", "summarise"}, `command "summarise" is not a matrix command`},
		{[]string{"-shards", "2", "--", "-workdir", "x"}, "the command's flag -workdir is the job's to set"},
	} {
		var stdout, stderr strings.Builder
		code := run(context.Background(), c.args, &stdout, &stderr)
		if code != 2 || stdout.Len() > 0 || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want 2, nothing, one line with %q", c.args, code, stdout.String(), stderr.String(), c.want)
		}
	}
}

// TestCheckAndResubmit: check exits 1 while a shard has nothing; resubmit
// without sbatch says so in one line.
func TestCheckAndResubmit(t *testing.T) {
	root := filepath.Join(t.TempDir(), "r")
	var stdout, stderr strings.Builder
	if code := run(context.Background(), []string{"-do", "check", "-shards", "2", "-root", root}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stdout.String(), "shard 1/2: not started") {
		t.Errorf("check of nothing: status %d, stdout %q, stderr %q; want 1 and shard 1 not started", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	t.Setenv("PATH", t.TempDir())
	code := run(context.Background(), []string{"-do", "resubmit", "-shards", "2", "-root", root, "-dir", t.TempDir()}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "batch: sbatch not found") {
		t.Errorf("resubmit without sbatch: status %d, stderr %q", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(root, "quicbench-headline.sbatch")); err != nil {
		t.Errorf("resubmit wrote no script: %v", err)
	}
}

// TestKubernetes writes the namespace, the claim, the Indexed Job and
// the merge Job, named with the run id, and says how to apply them.
func TestKubernetes(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr strings.Builder
	if code := run(context.Background(), []string{"-do", "kubernetes", "-shards", "3", "-time", "90", "-run-id", "r7", "-out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("status %d: %s", code, stderr.String())
	}
	for _, f := range []string{"quicbench-headline-r7-namespace.yaml", "quicbench-headline-r7-claim.yaml", "quicbench-headline-r7.yaml", "quicbench-headline-r7-merge.yaml"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(out, "quicbench-headline-r7.yaml"))
	if err != nil || !strings.Contains(string(b), "completions: 3") || !strings.Contains(string(b), `workingDir: "/usr/src/quicbench"`) ||
		!strings.Contains(string(b), "activeDeadlineSeconds: 5400") {
		t.Errorf("the Indexed Job: %v\n%s", err, b)
	}
	if !strings.Contains(stdout.String(), "kubectl apply -f "+filepath.Join(out, "quicbench-headline-r7-namespace.yaml")) {
		t.Errorf("stdout %q names no kubectl apply", stdout.String())
	}

	// An existing claim: none is generated. No run id: the time now.
	out = t.TempDir()
	stdout.Reset()
	if code := run(context.Background(), []string{"-do", "kubernetes", "-shards", "2", "-time", "1:00:00", "-claim", "team", "-out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("status %d: %s", code, stderr.String())
	}
	m, _ := filepath.Glob(filepath.Join(out, "*"))
	if len(m) != 3 || !regexp.MustCompile(`/quicbench-headline-20[0-9]{6}-[0-9]{6}\.yaml$`).MatchString(strings.Join(m, "\n")) ||
		strings.Contains(strings.Join(m, " "), "-claim.yaml") {
		t.Errorf("with -claim and no -run-id: wrote %v", m)
	}
}

// TestKubernetesRefusals: no -time, a bad run id or size: exit 2, one
// line, nothing written.
func TestKubernetesRefusals(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-run-id", "r1"}, "no time limit"},
		{[]string{"-time", "90", "-run-id", "R1"}, `run id "R1"`},
		{[]string{"-time", "90", "-run-id", "a_b"}, `run id "a_b"`},
		{[]string{"-time", "90", "-run-id", "r1", "-memory", "2GB"}, `memory "2GB"`},
		{[]string{"-time", "90", "-run-id", "r1", "-namespace", "default;"}, `namespace "default;"`},
	} {
		out := t.TempDir()
		var stdout, stderr strings.Builder
		code := run(context.Background(), append([]string{"-do", "kubernetes", "-shards", "2", "-out", out}, c.args...), &stdout, &stderr)
		if code != 2 || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("%q: status %d, stderr %q; want 2 and one line with %q", c.args, code, stderr.String(), c.want)
		}
		if m, _ := filepath.Glob(filepath.Join(out, "*")); len(m) > 0 {
			t.Errorf("%q: wrote %v", c.args, m)
		}
	}
}

// TestBinInjection: a -bin with shell syntax is written as one quoted
// word; running the scripts runs nothing it holds.
func TestBinInjection(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh:", err)
	}
	dir := t.TempDir()
	var stdout, stderr strings.Builder
	if code := run(context.Background(), []string{"-do", "slurm", "-shards", "3", "-bin", "bin;id>pwned;", "-root", "res", "-dir", dir, "--", "-repeats", "1"}, &stdout, &stderr); code != 0 {
		t.Fatalf("status %d: %s", code, stderr.String())
	}
	for _, f := range []string{"quicbench-headline.sbatch", "quicbench-headline-merge.sbatch"} {
		cmd := exec.Command("sh", filepath.Join(dir, "res", f))
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID=0")
		out, _ := cmd.CombinedOutput()
		if _, err := os.Stat(filepath.Join(dir, "pwned")); err == nil {
			t.Fatalf("%s ran id from -bin:\n%s", f, out)
		}
	}
}

// TestKubernetesLineBreakRefused: a carriage return (or another YAML
// line break) in a matrix flag is refused, exit 2, nothing written.
func TestKubernetesLineBreakRefused(t *testing.T) {
	for _, c := range []string{"\r", "\u2028", "\u2029", "\u0085"} {
		out := t.TempDir()
		var stdout, stderr strings.Builder
		arg := "-profiles=80:10" + c + "      hostPID: true" + c + "      initContainers:"
		code := run(context.Background(), []string{"-do", "kubernetes", "-shards", "2", "-root", "r", "-time", "90", "-out", out, "--", arg}, &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), "line break") {
			t.Errorf("%q: status %d, stderr %q; want 2 and the line break named", c, code, stderr.String())
		}
		if m, _ := filepath.Glob(filepath.Join(out, "*")); len(m) > 0 {
			t.Errorf("%q: wrote %v", c, m)
		}
	}
}

// TestResubmitRefusals: a -shards other than the root's is refused with
// exit 2 before a script is written; a symlinked shard directory is
// refused by check and resubmit.
func TestResubmitRefusals(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "r")
	if err := os.MkdirAll(filepath.Join(root, "shard-0"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "shard-0", "matrix.json"), []byte(`{"shard":"0/2"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", t.TempDir())
	var stdout, stderr strings.Builder
	code := run(context.Background(), []string{"-do", "resubmit", "-shards", "3", "-root", root, "-dir", dir}, &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "-shards 3: ") || !strings.Contains(stderr.String(), "is shard 0/2") {
		t.Errorf("resubmit -shards 3 of a root of 2: status %d, stderr %q", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(root, "quicbench-headline.sbatch")); err == nil {
		t.Error("the scripts were rewritten")
	}
	elsewhere := t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(root, "shard-1")); err != nil {
		t.Fatal(err)
	}
	for _, do := range []string{"check", "resubmit"} {
		stdout.Reset()
		stderr.Reset()
		code := run(context.Background(), []string{"-do", do, "-shards", "2", "-root", root, "-dir", dir}, &stdout, &stderr)
		if code != 1 || !strings.Contains(stderr.String(), "shard-1 is a symbolic link") {
			t.Errorf("%s with a symlinked shard: status %d, stderr %q", do, code, stderr.String())
		}
	}
}
