package batch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// SlurmArray is the sbatch script of the job array: one task per shard,
// index $SLURM_ARRAY_TASK_ID. The count is written into the script, not
// read from SLURM_ARRAY_TASK_COUNT, so that a resubmission of some
// indexes (sbatch --array=1,3) still runs shards of the same count.
func (j Job) SlurmArray() string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	j.sbatchHeader(&b, j.jobName(), fmt.Sprintf("%s/slurm-%%A-%%a.out", j.Root), j.CPUs)
	fmt.Fprintf(&b, "#SBATCH --array=0-%d\n", j.Shards-1)
	if !j.Shared {
		b.WriteString("#SBATCH --exclusive\n")
	}
	fmt.Fprintf(&b, "SHARDS=%d\n", j.Shards)
	b.WriteString(j.TaskScript("SLURM_ARRAY_TASK_ID"))
	return b.String()
}

// slurmMerge is the sbatch script of the merge job, submitted to start
// once every task of the array has ended (afterany).
func (j Job) slurmMerge() string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	j.sbatchHeader(&b, j.jobName()+"-merge", fmt.Sprintf("%s/slurm-merge-%%j.out", j.Root), 1)
	b.WriteString(j.MergeScript())
	return b.String()
}

func (j Job) sbatchHeader(b *strings.Builder, name, output string, cpus int) {
	fmt.Fprintf(b, "#SBATCH --job-name=%s\n#SBATCH --chdir=%s\n#SBATCH --output=%s\n", name, j.Dir, output)
	fmt.Fprintf(b, "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=%d\n", cpus)
	if j.Partition != "" {
		fmt.Fprintf(b, "#SBATCH --partition=%s\n", j.Partition)
	}
	if j.Time != "" {
		fmt.Fprintf(b, "#SBATCH --time=%s\n", j.Time)
	}
}

// SlurmFiles are the two scripts as written by WriteSlurm.
type SlurmFiles struct{ Array, Merge string }

// WriteSlurm writes the array's and the merge's scripts into dir as
// NAME.sbatch and NAME-merge.sbatch, and makes Root (under Dir when
// relative), where Slurm writes the tasks' output.
func (j Job) WriteSlurm(dir string) (SlurmFiles, error) {
	if err := j.Validate(); err != nil {
		return SlurmFiles{}, err
	}
	root := j.Root
	if !filepath.IsAbs(root) {
		root = filepath.Join(j.Dir, root)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return SlurmFiles{}, err
	}
	f := SlurmFiles{Array: filepath.Join(dir, j.jobName()+".sbatch"), Merge: filepath.Join(dir, j.jobName()+"-merge.sbatch")}
	for p, text := range map[string]string{f.Array: j.SlurmArray(), f.Merge: j.slurmMerge()} {
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			return SlurmFiles{}, err
		}
	}
	return f, nil
}

// Submitted are the ids Slurm gave the array and its merge job.
type Submitted struct{ Array, Merge string }

// Submit submits the array (only the shards in indexes, when given) with
// sbatch, then the merge job to start after every task has ended.
func Submit(ctx context.Context, sbatch string, f SlurmFiles, indexes []int) (Submitted, error) {
	var args []string
	if len(indexes) > 0 {
		args = append(args, "--array="+IndexList(indexes))
	}
	id, err := sbatchRun(ctx, sbatch, append(args, f.Array)...)
	if err != nil {
		return Submitted{}, err
	}
	mid, err := sbatchRun(ctx, sbatch, "--dependency=afterany:"+id, f.Merge)
	if err != nil {
		return Submitted{Array: id}, fmt.Errorf("array job %s submitted, but its merge job was not: %w", id, err)
	}
	return Submitted{Array: id, Merge: mid}, nil
}

// sbatchRun runs sbatch --parsable with args and returns the job id.
func sbatchRun(ctx context.Context, sbatch string, args ...string) (string, error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, sbatch, append([]string{"--parsable"}, args...)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("%s %s: %s", sbatch, strings.Join(args, " "), strings.ReplaceAll(msg, "\n", "; "))
	}
	return parseJobID(out.String())
}

// parseJobID reads sbatch --parsable's "id" or "id;cluster".
func parseJobID(out string) (string, error) {
	id, _, _ := strings.Cut(strings.TrimSpace(out), ";")
	if _, err := strconv.ParseUint(id, 10, 64); err != nil {
		return "", fmt.Errorf("sbatch printed %q, not a job id", strings.TrimSpace(out))
	}
	return id, nil
}

// IndexList is indexes as --array takes them: "1,3".
func IndexList(indexes []int) string {
	s := make([]string, len(indexes))
	for i, n := range indexes {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}

// errNoSbatch says sbatch could not be found.
var errNoSbatch = errors.New("sbatch not found: run this on a Slurm submit host, or write the scripts with -do slurm and submit them there")

// LookSbatch finds sbatch (or the path given) on PATH.
func LookSbatch(name string) (string, error) {
	p, err := exec.LookPath(name)
	if err != nil {
		return "", errNoSbatch
	}
	return p, nil
}
