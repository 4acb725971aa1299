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
