package k8s

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/measure/batch"
	batchv1 "k8s.io/api/batch/v1"
)

// TestShardsRunInImage runs every pod of a two-shard matrix's manifests
// in the image QUICBENCH_IMAGE names, with podman, as the kubelet would:
// the container's command, working directory, environment, privilege and
// the claim's mount, a directory here. The shards run one after the
// other, then the merge, which must find the matrix complete. Opt-in:
// bash deploy/image/test builds the image and runs it.
func TestShardsRunInImage(t *testing.T) {
	image := os.Getenv("QUICBENCH_IMAGE")
	if image == "" {
		t.Skip("QUICBENCH_IMAGE is unset: bash deploy/image/test builds the image and runs this test in it")
	}
	j := batch.Job{Command: "headline", Shards: 2, Root: "results/image-test", CPUs: 1, Dir: "/usr/src/quicbench", Bin: "bin",
		Image: image, RunID: "imagetest", Time: "10", Shared: true,
		Args: []string{"-profiles", "20:10", "-losses", "0", "-repeats", "2", "-duration", "2s", "-warmup", "500ms"}}
	m, err := j.Kubernetes()
	if err != nil {
		t.Fatal(err)
	}
	o, err := DecodeManifests(m)
	if err == nil {
		err = Check(j, o)
	}
	if err != nil {
		t.Fatal(err)
	}
	claim := t.TempDir()
	for i := range j.Shards {
		if out, err := podRun(o.Shards, i, claim); err != nil {
			t.Fatalf("shard %d: %v\n%s", i, err, out)
		}
	}
	out, err := podRun(o.Merge, -1, claim)
	if err != nil || !strings.Contains(out, "batch: shard 1/2: complete") {
		t.Fatalf("the merge: %v\n%s", err, out)
	}
	for _, f := range []string{"summary.md", "summary.json", "shard-0/matrix.json", "shard-1/matrix.json"} {
		if _, err := os.Stat(filepath.Join(claim, f)); err != nil {
			t.Error(err)
		}
	}
	t.Logf("the merge in the image:\n%s", out)
}

// podRun runs the Job's pod (completion index, or -1 for none) with
// podman, claim mounted where the pod mounts its claim, and returns what
// it printed. QUICBENCH_PODMAN_ARGS adds arguments to podman run.
func podRun(job *batchv1.Job, index int, claim string) (string, error) {
	c := job.Spec.Template.Spec.Containers[0]
	args := []string{"run", "--rm", "--network", "none", "-w", c.WorkingDir, "-v", claim + ":" + c.VolumeMounts[0].MountPath}
	if c.SecurityContext != nil && c.SecurityContext.Privileged != nil && *c.SecurityContext.Privileged {
		args = append(args, "--privileged")
	}
	for _, e := range c.Env {
		args = append(args, "-e", e.Name+"="+e.Value)
	}
	if index >= 0 {
		args = append(args, "-e", "JOB_COMPLETION_INDEX="+strconv.Itoa(index))
	}
	args = append(args, strings.Fields(os.Getenv("QUICBENCH_PODMAN_ARGS"))...)
	args = append(append(args, c.Image), c.Command...)
	out, err := exec.Command("podman", args...).CombinedOutput()
	return string(out), err
}
