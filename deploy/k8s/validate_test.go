package k8s

import (
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/measure/batch"
)

// jobs are descriptions of several shapes: the shard count, shared nodes,
// go run or built commands, a relative and an absolute root.
func jobs() []batch.Job {
	base := batch.Job{Command: "headline", Shards: 6, Root: "results/headline-shards", CPUs: 4, Dir: "/usr/src/quicbench", Bin: "bin"}
	one := base
	one.Shards, one.Command, one.Bin, one.Args = 1, "sessions", "", []string{"-sessions", "1 4", "-quick"}
	shared := base
	shared.Shared, shared.Root, shared.CPUs, shared.Name = true, "/data/q", 2, "sweep-7"
	return []batch.Job{base, one, shared}
}

// TestGeneratedManifestsDecodeAndCheck: the generator's manifests decode
// strictly into batch/v1 Jobs and run the description.
func TestGeneratedManifestsDecodeAndCheck(t *testing.T) {
	for _, j := range jobs() {
		if err := j.Validate(); err != nil {
			t.Fatal(err)
		}
		shards, merge := j.Kubernetes()
		s, err := Decode(shards)
		if err != nil {
			t.Fatalf("%s: the Indexed Job: %v\n%s", j.JobName(), err, shards)
		}
		m, err := Decode(merge)
		if err != nil {
			t.Fatalf("%s: the merge Job: %v\n%s", j.JobName(), err, merge)
		}
		if err := Check(j, s, m); err != nil {
			t.Errorf("%s: %v", j.JobName(), err)
		}
		if s.Name != j.JobName() || m.Name != j.JobName()+"-merge" {
			t.Errorf("names %q and %q", s.Name, m.Name)
		}
	}
}

// TestBrokenManifestsRefused: a typo'd field fails to decode; a manifest
// that decodes but would not run the description fails the check, named.
func TestBrokenManifestsRefused(t *testing.T) {
	j := jobs()[0]
	shards, merge := j.Kubernetes()
	for _, c := range []struct {
		name, from, to string
		inMerge        bool
		want           string
	}{
		{"typo'd field", "completionMode: Indexed", "completionsMode: Indexed", false, `unknown field "spec.completionsMode"`},
		{"field given twice", "  parallelism: 6\n", "  parallelism: 6\n  parallelism: 6\n", false, `key "parallelism" already set`},
		{"NonIndexed", "completionMode: Indexed", "completionMode: NonIndexed", false, "completionMode is not Indexed"},
		{"SHARDS off by one", `value: "6"`, `value: "5"`, false, `the SHARDS variable is "5"`},
		{"parallelism off by one", "parallelism: 6", "parallelism: 5", false, "completions and parallelism must both be 6"},
		{"not privileged", "privileged: true", "privileged: false", false, "not privileged"},
		{"restarted in place", "restartPolicy: Never", "restartPolicy: OnFailure", false, `restartPolicy is "OnFailure"`},
		{"no anti-affinity", "topologyKey: kubernetes.io/hostname", "topologyKey: topology.kubernetes.io/zone", false, "two shards may share a node"},
		{"fewer CPUs", `cpu: "4"`, `cpu: "2"`, false, "CPU request 2"},
		{"another shard count in the script", `-shard "$JOB_COMPLETION_INDEX/$SHARDS"`, `-shard "$JOB_COMPLETION_INDEX/6"`, false, "the shard's script"},
		{"merge short of a shard", " results/headline-shards/shard-5;", ";", true, "the merge does not read results/headline-shards/shard-5"},
	} {
		s, m := shards, merge
		target := &s
		if c.inMerge {
			target = &m
		}
		if !strings.Contains(*target, c.from) {
			t.Fatalf("%s: the manifest has no %q", c.name, c.from)
		}
		*target = strings.Replace(*target, c.from, c.to, 1)
		sj, err := Decode(s)
		if err == nil {
			var mj = sj
			if mj, err = Decode(m); err == nil {
				err = Check(j, sj, mj)
			}
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error with %q", c.name, err, c.want)
		}
	}
	if _, err := Decode("apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: x\n"); err == nil || !strings.Contains(err.Error(), "not a batch/v1 Job") {
		t.Errorf("a CronJob decoded as a Job: %v", err)
	}
	if _, err := Decode("apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n"); err == nil {
		t.Error("a Pod decoded as a Job")
	}
}

// TestDecodeRefusesMoreThanOneDocument: a Job followed by another
// document (a Pod, after --- or a carriage return's line break) is
// refused, where kubectl apply would create both.
func TestDecodeRefusesMoreThanOneDocument(t *testing.T) {
	shards, _ := jobs()[0].Kubernetes()
	pod := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: evil\nspec:\n  hostPID: true\n"
	for name, m := range map[string]string{
		"--- then a Pod":     shards + "---\n" + pod,
		"a Pod after \\r---": strings.ReplaceAll(shards+"---\n"+pod, "\n", "\r"),
		"--- then the Job":   shards + "---\n" + shards,
	} {
		if _, err := Decode(m); err == nil || !strings.Contains(err.Error(), "documents, not 1") {
			t.Errorf("%s: %v; want it refused", name, err)
		}
	}
	if _, err := Decode("---\n" + shards + "---\n"); err != nil {
		t.Errorf("one document between separators: %v", err)
	}
}

// TestDecodeRefusesNegativeCounts: a negative completions, parallelism,
// retry count or deadline is refused.
func TestDecodeRefusesNegativeCounts(t *testing.T) {
	shards, _ := jobs()[0].Kubernetes()
	for from, to := range map[string]string{
		"completions: 6":              "completions: -6",
		"parallelism: 6":              "parallelism: -1",
		"backoffLimitPerIndex: 2":     "backoffLimitPerIndex: -2",
		"  completionMode: Indexed\n": "  completionMode: Indexed\n  activeDeadlineSeconds: -5\n",
	} {
		if !strings.Contains(shards, from) {
			t.Fatalf("the manifest has no %q", from)
		}
		if _, err := Decode(strings.Replace(shards, from, to, 1)); err == nil || !strings.Contains(err.Error(), "is not negative") {
			t.Errorf("%q: %v; want it refused", to, err)
		}
	}
}

// TestHostileArgumentsStayInTheScript: every argument the generator
// accepts, however it tries to look like YAML, comes back from the
// manifest as the same script, and one with a YAML line break is refused
// before any manifest is made.
func TestHostileArgumentsStayInTheScript(t *testing.T) {
	for _, a := range []string{"-profiles=80:10\n      hostPID: true\n      initContainers:\n      - name: evil",
		"x\n---\napiVersion: v1\nkind: Pod", "'\n\"#: |\n\t- [", "-profiles=80:10\n\n\n", "\u00a0\U0001f600"} {
		j := jobs()[0]
		j.Args = []string{a}
		if err := j.Validate(); err != nil {
			t.Errorf("%q refused: %v", a, err)
			continue
		}
		shards, merge := j.Kubernetes()
		s, err := Decode(shards)
		if err != nil {
			t.Errorf("%q: %v\n%s", a, err, shards)
			continue
		}
		m, err := Decode(merge)
		if err == nil {
			err = Check(j, s, m)
		}
		if err != nil || s.Spec.Template.Spec.HostPID || len(s.Spec.Template.Spec.InitContainers) > 0 {
			t.Errorf("%q: %v, hostPID %v", a, err, s.Spec.Template.Spec.HostPID)
		}
	}
	for _, c := range []string{"\r", "\u0085", "\u2028", "\u2029"} {
		j := jobs()[0]
		j.Args = []string{"-profiles=80:10" + c + "      hostPID: true"}
		if err := j.Validate(); err == nil {
			t.Errorf("%q accepted", c)
		}
	}
}
