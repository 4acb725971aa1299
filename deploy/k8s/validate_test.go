package k8s

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/measure/batch"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// jobs are descriptions of several shapes: the shard count, shared nodes,
// go run or built commands, a relative and an absolute root, a generated
// and an existing claim.
func jobs() []batch.Job {
	base := batch.Job{Command: "headline", Shards: 6, Root: "results/headline-shards", CPUs: 4, Dir: "/usr/src/quicbench", Bin: "bin",
		RunID: "20261207-0700", Time: "2:00:00"}
	one := base
	one.Shards, one.Command, one.Bin, one.Args, one.Time = 1, "sessions", "", []string{"-sessions", "1 4", "-quick"}, "1-12"
	shared := base
	shared.Shared, shared.Root, shared.CPUs, shared.Name, shared.RunID = true, "/data/q", 2, "sweep-7", "a"
	shared.Namespace, shared.Memory, shared.Storage, shared.StorageClass = "bench", "512Mi", "1Ti", "nfs.example"
	existing := base
	existing.Claim, existing.Time = "team-results", "90"
	return []batch.Job{base, one, shared, existing}
}

// generate is j's manifests, decoded; the test fails if they do not
// decode.
func generate(t *testing.T, j batch.Job) (batch.Manifests, Objects) {
	t.Helper()
	m, err := j.Kubernetes()
	if err != nil {
		t.Fatal(err)
	}
	o, err := DecodeManifests(m)
	if err != nil {
		t.Fatalf("%s: %v\n%s%s%s%s", j.KubeName(), err, m.Namespace, m.Claim, m.Shards, m.Merge)
	}
	return m, o
}

// TestGeneratedManifestsDecodeAndCheck: the generator's manifests decode
// strictly into a v1 Namespace, a v1 PersistentVolumeClaim and batch/v1
// Jobs, and run the description.
func TestGeneratedManifestsDecodeAndCheck(t *testing.T) {
	for _, j := range jobs() {
		_, o := generate(t, j)
		if err := Check(j, o); err != nil {
			t.Errorf("%s: %v", j.KubeName(), err)
		}
		if (o.Claim == nil) != (j.Claim != "") {
			t.Errorf("%s: claim %v generated where the description's is %q", j.KubeName(), o.Claim != nil, j.Claim)
		}
	}
}

// qos is the pod's QoS class by Kubernetes' rule: Guaranteed when every
// container has CPU and memory limits and requests equal to them.
func qos(p corev1.PodSpec) corev1.PodQOSClass {
	for _, c := range p.Containers {
		for _, r := range []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory} {
			l, ok := c.Resources.Limits[r]
			q, hasReq := c.Resources.Requests[r]
			if !ok || (hasReq && q.Cmp(l) != 0) {
				return corev1.PodQOSBurstable
			}
		}
	}
	return corev1.PodQOSGuaranteed
}

// TestManifestsProperties reads what an operator needs from the decoded
// objects themselves: the namespace's Pod Security level, a ReadWriteMany
// claim, Guaranteed QoS with whole CPUs, deadlines from the time limit,
// and names that carry the run id, so that two runs share none.
func TestManifestsProperties(t *testing.T) {
	for _, j := range jobs() {
		_, o := generate(t, j)
		if got := o.Namespace.Labels["pod-security.kubernetes.io/enforce"]; got != "privileged" {
			t.Errorf("%s: the namespace enforces %q, want privileged", j.KubeName(), got)
		}
		if o.Claim != nil && (len(o.Claim.Spec.AccessModes) != 1 || o.Claim.Spec.AccessModes[0] != corev1.ReadWriteMany) {
			t.Errorf("%s: the claim's access modes are %v", j.KubeName(), o.Claim.Spec.AccessModes)
		}
		deadline, _ := j.Deadline()
		for _, job := range []*batchv1.Job{o.Shards, o.Merge} {
			p := job.Spec.Template.Spec
			if qos(p) != corev1.PodQOSGuaranteed {
				t.Errorf("%s: QoS %s, want Guaranteed: %v", job.Name, qos(p), p.Containers[0].Resources)
			}
			if cpu := p.Containers[0].Resources.Limits[corev1.ResourceCPU]; cpu.MilliValue()%1000 != 0 {
				t.Errorf("%s: %s CPUs, want whole CPUs", job.Name, cpu.String())
			}
			if p.ActiveDeadlineSeconds == nil || *p.ActiveDeadlineSeconds != deadline || job.Spec.ActiveDeadlineSeconds == nil {
				t.Errorf("%s: pods' deadline %v, Job's %v; want the pods' %d", job.Name, p.ActiveDeadlineSeconds, job.Spec.ActiveDeadlineSeconds, deadline)
			}
			if !strings.Contains(job.Name, j.RunID) || p.Volumes[0].PersistentVolumeClaim.ClaimName != j.ClaimName() {
				t.Errorf("%s: the name does not carry the run id %q, or the volume is not %s", job.Name, j.RunID, j.ClaimName())
			}
		}
		if j.Claim == "" && !strings.Contains(o.Claim.Name, j.RunID) {
			t.Errorf("the claim %s does not carry the run id", o.Claim.Name)
		}
		other := j
		other.RunID = "other"
		_, o2 := generate(t, other)
		if o2.Shards.Name == o.Shards.Name || o2.Merge.Name == o.Merge.Name || (o.Claim != nil && o2.Claim.Name == o.Claim.Name) {
			t.Errorf("runs %s and %s share a name", j.RunID, other.RunID)
		}
	}
}

// TestBrokenManifestsRefused: a typo'd field fails to decode; a manifest
// that decodes but would not run the description fails the check, named.
func TestBrokenManifestsRefused(t *testing.T) {
	j := jobs()[0]
	manifests, err := j.Kubernetes()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, from, to string
		// in is the manifest changed: "namespace", "claim", "merge", or the Indexed Job.
		in   string
		want string
	}{
		{"typo'd field", "completionMode: Indexed", "completionsMode: Indexed", "", `unknown field "spec.completionsMode"`},
		{"field given twice", "  parallelism: 6\n", "  parallelism: 6\n  parallelism: 6\n", "", `key "parallelism" already set`},
		{"NonIndexed", "completionMode: Indexed", "completionMode: NonIndexed", "", "completionMode is not Indexed"},
		{"SHARDS off by one", `value: "6"`, `value: "5"`, "", `the SHARDS variable is "5"`},
		{"parallelism off by one", "parallelism: 6", "parallelism: 5", "", "completions and parallelism must both be 6"},
		{"not privileged", "privileged: true", "privileged: false", "", "not privileged"},
		{"restarted in place", "restartPolicy: Never", "restartPolicy: OnFailure", "", `restartPolicy is "OnFailure"`},
		{"no anti-affinity", "topologyKey: kubernetes.io/hostname", "topologyKey: topology.kubernetes.io/zone", "", "two shards may share a node"},
		{"fewer CPUs", `cpu: "4"`, `cpu: "2"`, "", "cpu request 2 and limit 4"},
		{"Burstable memory", "            memory: 2Gi\n", "            memory: 1Gi\n", "", "memory request 1Gi and limit 2Gi"},
		{"Burstable merge", "            memory: 2Gi\n", "            memory: 1Gi\n", "merge", "memory request 1Gi and limit 2Gi"},
		{"no memory limit", "            cpu: \"4\"\n            memory: 2Gi\n", "            cpu: \"4\"\n", "", "memory request 0 and limit 2Gi"},
		{"another resource", "          limits:\n", "          limits:\n            ephemeral-storage: 1Gi\n", "", "want only cpu and memory"},
		{"another shard count in the script", `-shard "$JOB_COMPLETION_INDEX/$SHARDS"`, `-shard "$JOB_COMPLETION_INDEX/6"`, "", "the shard's script"},
		{"merge short of a shard", " results/headline-shards/shard-5;", ";", "merge", "the merge does not read results/headline-shards/shard-5"},
		{"baseline namespace", "enforce: privileged", "enforce: baseline", "namespace", `enforce is "baseline"`},
		{"another namespace", "  name: quicbench\n", "  name: default\n", "namespace", `the namespace is "default"`},
		{"Job in another namespace", "  namespace: quicbench\n", "  namespace: default\n", "", "a Job is default/quicbench-headline-20261207-0700"},
		{"ReadWriteOnce claim", "ReadWriteMany", "ReadWriteOnce", "claim", "not ReadWriteMany"},
		{"claim of another size", "storage: 5Gi", "storage: 1Gi", "claim", "asks for 1Gi of storage, not 5Gi"},
		{"claim without the run id", "name: quicbench-headline-20261207-0700-results", "name: quicbench-results", "claim", "labelled with the run id"},
		{"Job named without the run id", "name: quicbench-headline-20261207-0700\n", "name: quicbench-headline\n", "", "the names carry the run id"},
		{"no Job deadline", "  activeDeadlineSeconds: 21600\n", "", "", "activeDeadlineSeconds is unset, not 21600"},
		{"no pod deadline", "      activeDeadlineSeconds: 7200\n", "", "", "pods' activeDeadlineSeconds is unset, not 7200"},
		{"merge without a deadline", "      activeDeadlineSeconds: 7200\n", "", "merge", "pods' activeDeadlineSeconds is unset"},
		{"another deadline", "      activeDeadlineSeconds: 7200\n", "      activeDeadlineSeconds: 7201\n", "", "is 7201, not 7200"},
		{"no maxFailedIndexes", "  maxFailedIndexes: 0\n", "", "", "maxFailedIndexes is unset, not 0"},
		{"an init container", "      containers:\n", "      initContainers:\n      - name: x\n        image: x\n      containers:\n", "", "1 init containers"},
		{"a second document", "kind: Namespace\n", "kind: Namespace\n---\nkind: Pod\napiVersion: v1\n---\napiVersion: v1\nkind: Namespace\n", "namespace", "documents, not 1"},
	} {
		m := manifests
		target := map[string]*string{"namespace": &m.Namespace, "claim": &m.Claim, "merge": &m.Merge, "": &m.Shards}[c.in]
		if !strings.Contains(*target, c.from) {
			t.Fatalf("%s: the manifest has no %q", c.name, c.from)
		}
		*target = strings.Replace(*target, c.from, c.to, 1)
		o, err := DecodeManifests(m)
		if err == nil {
			err = Check(j, o)
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
	m := manifests
	m.Claim = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n"
	if _, err := DecodeManifests(m); err == nil || !strings.Contains(err.Error(), "not a v1 PersistentVolumeClaim") {
		t.Errorf("a Pod for the claim: %v", err)
	}
	m.Claim = ""
	if o, err := DecodeManifests(m); err != nil || Check(j, o) == nil || !strings.Contains(Check(j, o).Error(), "no results claim") {
		t.Errorf("no claim: %v", err)
	}
	e := jobs()[3]
	if o, err := DecodeManifests(manifests); err != nil || Check(e, o) == nil || !strings.Contains(Check(e, o).Error(), "a claim is generated although") {
		t.Errorf("a claim beside -claim: %v", err)
	}
}

// TestDecodeRefusesMoreThanOneDocument: a Job followed by another
// document (a Pod, after --- or a carriage return's line break) is
// refused, where kubectl apply would create both.
func TestDecodeRefusesMoreThanOneDocument(t *testing.T) {
	m, _ := generate(t, jobs()[0])
	pod := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: evil\nspec:\n  hostPID: true\n"
	for name, s := range map[string]string{
		"--- then a Pod":     m.Shards + "---\n" + pod,
		"a Pod after \\r---": strings.ReplaceAll(m.Shards+"---\n"+pod, "\n", "\r"),
		"--- then the Job":   m.Shards + "---\n" + m.Shards,
	} {
		if _, err := Decode(s); err == nil || !strings.Contains(err.Error(), "documents, not 1") {
			t.Errorf("%s: %v; want it refused", name, err)
		}
	}
	if _, err := Decode("---\n" + m.Shards + "---\n"); err != nil {
		t.Errorf("one document between separators: %v", err)
	}
}

// TestDecodeRefusesNegativeCounts: a negative completions, parallelism,
// retry count or deadline is refused.
func TestDecodeRefusesNegativeCounts(t *testing.T) {
	m, _ := generate(t, jobs()[0])
	for from, to := range map[string]string{
		"completions: 6":               "completions: -6",
		"parallelism: 6":               "parallelism: -1",
		"backoffLimitPerIndex: 2":      "backoffLimitPerIndex: -2",
		"activeDeadlineSeconds: 21600": "activeDeadlineSeconds: -5",
	} {
		if !strings.Contains(m.Shards, from) {
			t.Fatalf("the manifest has no %q", from)
		}
		if _, err := Decode(strings.Replace(m.Shards, from, to, 1)); err == nil || !strings.Contains(err.Error(), "is not negative") {
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
		_, o := generate(t, j)
		if err := Check(j, o); err != nil || o.Shards.Spec.Template.Spec.HostPID || len(o.Shards.Spec.Template.Spec.InitContainers) > 0 {
			t.Errorf("%q: %v, hostPID %v", a, err, o.Shards.Spec.Template.Spec.HostPID)
		}
	}
	for _, c := range []string{"\r", "\u0085", "\u2028", "\u2029"} {
		j := jobs()[0]
		j.Args = []string{"-profiles=80:10" + c + "      hostPID: true"}
		if _, err := j.Kubernetes(); err == nil {
			t.Errorf("%q accepted", c)
		}
	}
}

// TestHostileValuesStayValues: an image or a directory that YAML would
// read as an alias, a tag, a flow collection or a comment stays the
// string it was, or the generator refuses it.
func TestHostileValuesStayValues(t *testing.T) {
	for _, v := range []string{"*x", "&a", "!!int", "[a]", "{a: b}", "a#b", "@x", "|", ">-", "?", "~", "null", "true", "0x10"} {
		j := jobs()[0]
		j.Image, j.Dir = v, "/"+v
		m, err := j.Kubernetes()
		if err != nil {
			continue
		}
		o, err := DecodeManifests(m)
		if err != nil {
			t.Errorf("%q: %v", v, err)
			continue
		}
		c := o.Shards.Spec.Template.Spec.Containers[0]
		if c.Image != v || c.WorkingDir != "/"+v || Check(j, o) != nil {
			t.Errorf("%q came back as image %q, workingDir %q: %v", v, c.Image, c.WorkingDir, Check(j, o))
		}
	}
}

// TestDeadlines: the pods' deadline is the time limit read as Slurm
// reads --time; the Indexed Job's allows each shard its retries.
func TestDeadlines(t *testing.T) {
	for time, want := range map[string]int64{"90": 5400, "1:30": 90, "2:00:00": 7200, "1-0": 86400, "1-2:03": 93780, "0-0:0:5": 5} {
		j := jobs()[0]
		j.Time = time
		_, o := generate(t, j)
		got := fmt.Sprint(*o.Shards.Spec.Template.Spec.ActiveDeadlineSeconds, *o.Shards.Spec.ActiveDeadlineSeconds)
		if got != fmt.Sprint(want, want*(batch.BackoffLimitPerIndex+1)) {
			t.Errorf("-time %s: deadlines %s, want %d for a pod", time, got, want)
		}
	}
}
