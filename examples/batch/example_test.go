package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Write a two-shard matrix's sbatch scripts and show the array's task line.
func Example() {
	dir, err := os.MkdirTemp("", "batch-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	root := filepath.Join(dir, "results")
	var out strings.Builder
	code := run(context.Background(), []string{"-shards", "2", "-root", root, "-dir", dir, "-bin", "bin", "--", "-quick"}, &out, os.Stderr)
	b, err := os.ReadFile(filepath.Join(root, "quicbench-headline.sbatch"))
	if err != nil {
		fmt.Println(err)
		return
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	fmt.Println(code, strings.ReplaceAll(lines[len(lines)-1], root, "ROOT"))
	// Output:
	// 0 exec bin/headline -shard "$SLURM_ARRAY_TASK_ID/$SHARDS" -workdir ROOT/shard-"$SLURM_ARRAY_TASK_ID" -no-summary -quick
}
