package batch

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/*.yaml from the code as it is")

// kubeJob is a description with every Kubernetes setting its default.
func kubeJob() Job {
	j := testJob(3, "results/headline-shards")
	j.Dir, j.RunID, j.Time = "/usr/src/quicbench", "20261207-0700", "2:00:00"
	return j
}

// TestKubernetesGolden: the manifests of one description, byte for byte.
// A change to them is deliberate: rerun with -update-golden and read the
// difference.
func TestKubernetesGolden(t *testing.T) {
	m, err := kubeJob().Kubernetes()
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{"namespace": m.Namespace, "claim": m.Claim, "shards": m.Shards, "merge": m.Merge} {
		p := filepath.Join("testdata", "kubernetes-"+name+".yaml")
		if *updateGolden {
			if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if text != string(want) {
			t.Errorf("%s differs from %s (rerun with -update-golden if deliberate):\n%s", name, p, text)
		}
	}
}

// TestKubernetesRefusesBadRunIDs: a run id that is no DNS label, or makes
// the names too long, is refused before any manifest is made.
func TestKubernetesRefusesBadRunIDs(t *testing.T) {
	for _, id := range []string{"", "Run1", "-a", "a-", "a_b", "a.b", "a b", "a\rb", "a/b", "ä",
		strings.Repeat("a", maxKubeName-len("quicbench-headline-")+1)} {
		j := kubeJob()
		j.RunID = id
		if m, err := j.Kubernetes(); err == nil || !strings.Contains(err.Error(), "run id") || m.Shards != "" {
			t.Errorf("run id %q: %v; want it refused", id, err)
		}
	}
	for _, id := range []string{"a", "0", "20261207-0700", strings.Repeat("a", maxKubeName-len("quicbench-headline-"))} {
		j := kubeJob()
		j.RunID = id
		if _, err := j.Kubernetes(); err != nil {
			t.Errorf("run id %q: %v", id, err)
		}
	}
}

// TestKubernetesRefusesBadSettings: the time limit, the namespace, the
// sizes and the claim are checked before any manifest is made.
func TestKubernetesRefusesBadSettings(t *testing.T) {
	for _, c := range []struct {
		set  func(*Job)
		want string
	}{
		{func(j *Job) { j.Time = "" }, "no time limit"},
		{func(j *Job) { j.Time = "INFINITE" }, "not a number"},
		{func(j *Job) { j.Time = "1:2:3:4" }, "more than three fields"},
		{func(j *Job) { j.Time = "0" }, "give 1 s to 365 days"},
		{func(j *Job) { j.Time = "366-0" }, "give 1 s to 365 days"},
		{func(j *Job) { j.Time = "-5" }, "not a number"},
		{func(j *Job) { j.Namespace = "Bench" }, `namespace "Bench"`},
		{func(j *Job) { j.Memory = "2G" }, `memory "2G"`},
		{func(j *Job) { j.Memory = "0Gi" }, `memory "0Gi"`},
		{func(j *Job) { j.Storage = "lots" }, `storage "lots"`},
		{func(j *Job) { j.StorageClass = "NFS" }, `storage class "NFS"`},
		{func(j *Job) { j.Claim = "a_b" }, `claim "a_b"`},
		{func(j *Job) { j.Shards = 0 }, "shards 0"},
	} {
		j := kubeJob()
		c.set(&j)
		if _, err := j.Kubernetes(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v; want an error with %q", j, err, c.want)
		}
	}
}

// TestSlurmSeconds: every form of Slurm's --time.
func TestSlurmSeconds(t *testing.T) {
	for s, want := range map[string]int64{"1": 60, "120": 7200, "2:30": 150, "1:00:00": 3600, "2-0": 172800, "1-1": 90000,
		"1-1:30": 91800, "1-0:0:9": 86409, "365-0": 365 * 86400} {
		if got, err := slurmSeconds(s); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"", ":", "1:", "a", "1.5", "1-", "-1", "1-2-3", "1-1:1:1:1", "+5", " 5", "1234567"} {
		if got, err := slurmSeconds(s); err == nil {
			t.Errorf("%q: %d; want it refused", s, got)
		}
	}
}
