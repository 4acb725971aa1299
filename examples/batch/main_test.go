package main

import (
	"context"
	"os"
	"path/filepath"
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

// TestKubernetes writes both manifests.
func TestKubernetes(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr strings.Builder
	if code := run(context.Background(), []string{"-do", "kubernetes", "-shards", "3", "-out", out}, &stdout, &stderr); code != 0 {
		t.Fatalf("status %d: %s", code, stderr.String())
	}
	b, err := os.ReadFile(filepath.Join(out, "quicbench-headline.yaml"))
	if err != nil || !strings.Contains(string(b), "completions: 3") || !strings.Contains(string(b), "workingDir: /usr/src/quicbench") {
		t.Errorf("the Indexed Job: %v\n%s", err, b)
	}
	if _, err := os.Stat(filepath.Join(out, "quicbench-headline-merge.yaml")); err != nil {
		t.Error(err)
	}
}
