package k8s

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/shakenfist/quicbench/measure/batch"
	"go.yaml.in/yaml/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// decoder decodes batch/v1 and core/v1 objects, refusing unknown and
// duplicate fields.
var decoder = sync.OnceValues(func() (runtime.Decoder, error) {
	scheme := runtime.NewScheme()
	if err := batchv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer(), nil
})

// Objects are a Job's manifests, decoded.
type Objects struct {
	Namespace *corev1.Namespace
	// Claim is nil when the Job mounts an existing claim.
	Claim         *corev1.PersistentVolumeClaim
	Shards, Merge *batchv1.Job
}

// DecodeManifests decodes each of m's manifests strictly as its kind: a
// v1 Namespace, a v1 PersistentVolumeClaim (absent when m has none) and
// two batch/v1 Jobs, each one YAML document.
func DecodeManifests(m batch.Manifests) (Objects, error) {
	var o Objects
	var errs []error
	var err error
	if o.Namespace, err = decodeAs[*corev1.Namespace](m.Namespace, "v1 Namespace"); err != nil {
		errs = append(errs, fmt.Errorf("the namespace: %w", err))
	}
	if m.Claim != "" {
		if o.Claim, err = decodeAs[*corev1.PersistentVolumeClaim](m.Claim, "v1 PersistentVolumeClaim"); err != nil {
			errs = append(errs, fmt.Errorf("the claim: %w", err))
		}
	}
	if o.Shards, err = Decode(m.Shards); err != nil {
		errs = append(errs, fmt.Errorf("the Indexed Job: %w", err))
	}
	if o.Merge, err = Decode(m.Merge); err != nil {
		errs = append(errs, fmt.Errorf("the merge Job: %w", err))
	}
	return o, errors.Join(errs...)
}

// Decode reads one manifest as a batch/v1 Job, strictly: a field the API
// does not have, a field given twice, another kind, more than one
// document or a negative count is an error.
func Decode(manifest string) (*batchv1.Job, error) {
	job, err := decodeAs[*batchv1.Job](manifest, "batch/v1 Job")
	if err != nil {
		return nil, err
	}
	if err := nonNegative(job); err != nil {
		return nil, err
	}
	return job, nil
}

// decodeAs reads manifest, one YAML document, strictly as a T (what
// names it in the error).
func decodeAs[T runtime.Object](manifest, what string) (T, error) {
	var zero T
	d, err := decoder()
	if err != nil {
		return zero, err
	}
	if n, err := documents(manifest); err != nil {
		return zero, err
	} else if n != 1 {
		return zero, fmt.Errorf("the manifest holds %d YAML documents, not 1: kubectl apply would create each", n)
	}
	obj, gvk, err := d.Decode([]byte(manifest), nil, nil)
	if err != nil {
		return zero, err
	}
	t, ok := obj.(T)
	if !ok {
		return zero, fmt.Errorf("the manifest is a %s, not a %s", gvk, what)
	}
	return t, nil
}

// documents counts the non-empty YAML documents in manifest, as the
// YAML parser the decoder uses reads them.
func documents(manifest string) (int, error) {
	dec := yaml.NewDecoder(strings.NewReader(manifest))
	n := 0
	for {
		var v any
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		if v != nil {
			n++
		}
	}
}

// nonNegative refuses a negative count or time in the Job and its pod.
func nonNegative(job *batchv1.Job) error {
	s, p := job.Spec, job.Spec.Template.Spec
	var errs []error
	for _, f := range []struct {
		name string
		v    *int32
	}{{"completions", s.Completions}, {"parallelism", s.Parallelism}, {"backoffLimit", s.BackoffLimit},
		{"backoffLimitPerIndex", s.BackoffLimitPerIndex}, {"maxFailedIndexes", s.MaxFailedIndexes}, {"ttlSecondsAfterFinished", s.TTLSecondsAfterFinished}} {
		if f.v != nil && *f.v < 0 {
			errs = append(errs, fmt.Errorf("%s is %d: a count is not negative", f.name, *f.v))
		}
	}
	for _, f := range []struct {
		name string
		v    *int64
	}{{"activeDeadlineSeconds", s.ActiveDeadlineSeconds}, {"template's activeDeadlineSeconds", p.ActiveDeadlineSeconds},
		{"terminationGracePeriodSeconds", p.TerminationGracePeriodSeconds}} {
		if f.v != nil && *f.v < 0 {
			errs = append(errs, fmt.Errorf("%s is %d: a time is not negative", f.name, *f.v))
		}
	}
	return errors.Join(errs...)
}

// Check says what in the decoded manifests does not run j: the
// namespace and its Pod Security level, the results claim, the Indexed
// Job (shards) and the merge Job. Every problem is listed.
func Check(j batch.Job, o Objects) error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if o.Namespace == nil || o.Shards == nil || o.Merge == nil {
		return errors.New("the namespace, the Indexed Job and the merge Job must all be there")
	}
	deadline, err := j.Deadline()
	if err != nil {
		bad("the description's time %q: %v", j.Time, err)
	}
	ns := cmp.Or(j.Namespace, batch.DefaultNamespace)
	checkNamespace(o.Namespace, ns, bad)
	checkClaim(j, o.Claim, ns, bad)
	name := j.KubeName()
	for _, c := range []struct {
		job  *batchv1.Job
		name string
		// deadline is the Job's activeDeadlineSeconds.
		deadline int64
	}{{o.Shards, name, deadline * (batch.BackoffLimitPerIndex + 1)}, {o.Merge, name + "-merge", deadline}} {
		if c.job.Name != c.name || c.job.Namespace != ns {
			bad("a Job is %s/%s, not %s/%s: the names carry the run id, so two runs never collide", c.job.Namespace, c.job.Name, ns, c.name)
		}
		if c.job.Labels[batch.RunLabel] != j.RunID || c.job.Spec.Template.Labels[batch.RunLabel] != j.RunID {
			bad("%s or its pods are not labelled %s=%s", c.job.Name, batch.RunLabel, j.RunID)
		}
		if d := c.job.Spec.ActiveDeadlineSeconds; d == nil || *d != c.deadline {
			bad("%s's activeDeadlineSeconds is %s, not %d", c.job.Name, show(d), c.deadline)
		}
		if d := c.job.Spec.Template.Spec.ActiveDeadlineSeconds; d == nil || *d != deadline {
			bad("%s's pods' activeDeadlineSeconds is %s, not %d (the time limit of one task, as Slurm's --time)", c.job.Name, show(d), deadline)
		}
	}
	s := o.Shards.Spec
	n := int32(j.Shards)
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		bad("completionMode is not Indexed: the pods get no JOB_COMPLETION_INDEX")
	}
	if s.Completions == nil || *s.Completions != n || s.Parallelism == nil || *s.Parallelism != n {
		bad("completions and parallelism must both be %d, the shards", n)
	}
	if s.BackoffLimitPerIndex == nil || *s.BackoffLimitPerIndex < 1 {
		bad("backoffLimitPerIndex is unset or 0: a failed shard's pod would not be retried")
	}
	if s.MaxFailedIndexes == nil || *s.MaxFailedIndexes != 0 {
		bad("maxFailedIndexes is %s, not 0: the Job would not fail, and a wait for its failure not end, when a shard has used its retries", show(s.MaxFailedIndexes))
	}
	c, err := oneContainer(o.Shards, j, j.CPUs)
	if err != nil {
		bad("%s: %v", o.Shards.Name, err)
	} else {
		if got := env(c, "SHARDS"); got != strconv.Itoa(j.Shards) {
			bad("the SHARDS variable is %q, not the completions %d", got, n)
		}
		if c.SecurityContext == nil || c.SecurityContext.Privileged == nil || !*c.SecurityContext.Privileged {
			bad("the shard's container is not privileged: it cannot build network namespaces")
		}
		if got, want := script(c), j.TaskScript("JOB_COMPLETION_INDEX"); got != want {
			bad("the shard's script is %q, not %q", got, want)
		}
	}
	if !j.Shared && !antiAffine(o.Shards) {
		bad("no required pod anti-affinity on kubernetes.io/hostname by the pods' own label: two shards may share a node")
	}
	if o.Merge.Spec.CompletionMode != nil && *o.Merge.Spec.CompletionMode == batchv1.IndexedCompletion {
		bad("the merge Job is Indexed: it is one pod")
	}
	if c, err := oneContainer(o.Merge, j, 1); err != nil {
		bad("%s: %v", o.Merge.Name, err)
	} else {
		sc := script(c)
		for i := range j.Shards {
			if !strings.Contains(sc, " "+batch.ShardDir(j.Root, i)+" ") && !strings.Contains(sc, " "+batch.ShardDir(j.Root, i)+";") {
				bad("the merge does not read %s", batch.ShardDir(j.Root, i))
			}
		}
		if sc != j.MergeScript() {
			bad("the merge's script is %q, not %q", sc, j.MergeScript())
		}
	}
	return errors.Join(errs...)
}

// checkNamespace: the namespace is ns and enforces the Pod Security level
// the privileged shards need.
func checkNamespace(n *corev1.Namespace, ns string, bad func(string, ...any)) {
	if n.Name != ns {
		bad("the namespace is %q, not %q", n.Name, ns)
	}
	if got := n.Labels["pod-security.kubernetes.io/enforce"]; got != batch.PodSecurityLevel {
		bad("the namespace's pod-security.kubernetes.io/enforce is %q, not %q: the shards' privileged pods would be refused", got, batch.PodSecurityLevel)
	}
}

// checkClaim: the generated claim is ReadWriteMany, of the size and
// class asked, in ns; none is generated when j names an existing one.
func checkClaim(j batch.Job, c *corev1.PersistentVolumeClaim, ns string, bad func(string, ...any)) {
	if j.Claim != "" {
		if c != nil {
			bad("a claim is generated although the description mounts the existing %q", j.Claim)
		}
		return
	}
	if c == nil {
		bad("no results claim is generated")
		return
	}
	if c.Name != j.ClaimName() || c.Namespace != ns || c.Labels[batch.RunLabel] != j.RunID {
		bad("the claim is %s/%s labelled %s=%q, not %s/%s labelled with the run id %q", c.Namespace, c.Name, batch.RunLabel, c.Labels[batch.RunLabel], ns, j.ClaimName(), j.RunID)
	}
	if !slices.Equal(c.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}) {
		bad("the claim's access modes are %v, not ReadWriteMany: every shard's pod, on its own node, mounts it", c.Spec.AccessModes)
	}
	want, err := resource.ParseQuantity(cmp.Or(j.Storage, batch.DefaultStorage))
	if got := c.Spec.Resources.Requests[corev1.ResourceStorage]; err != nil || got.Cmp(want) != 0 {
		bad("the claim asks for %s of storage, not %s", got.String(), cmp.Or(j.Storage, batch.DefaultStorage))
	}
	if got := c.Spec.StorageClassName; (j.StorageClass == "") != (got == nil) || (got != nil && *got != j.StorageClass) {
		bad("the claim's storage class is %s, not %q", show(got), j.StorageClass)
	}
}

// show is *p, or "unset".
func show[T any](p *T) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

// oneContainer checks the pod template every Job here has (one
// container, restartPolicy Never, the working directory, Guaranteed QoS
// with the CPUs and memory asked, the results claim mounted at the root)
// and returns its container.
func oneContainer(job *batchv1.Job, j batch.Job, cpus int) (*corev1.Container, error) {
	p := job.Spec.Template.Spec
	if p.RestartPolicy != corev1.RestartPolicyNever {
		return nil, fmt.Errorf("restartPolicy is %q, not Never (a retry is a new pod, which resumes the work directory)", p.RestartPolicy)
	}
	if len(p.Containers) != 1 || len(p.InitContainers) > 0 || len(p.EphemeralContainers) > 0 {
		return nil, fmt.Errorf("%d containers and %d init containers, want 1 and none", len(p.Containers), len(p.InitContainers))
	}
	c := &p.Containers[0]
	if c.WorkingDir != j.Dir {
		return nil, fmt.Errorf("workingDir %q, not %q", c.WorkingDir, j.Dir)
	}
	if err := guaranteed(c, cpus, cmp.Or(j.Memory, batch.DefaultMemory)); err != nil {
		return nil, err
	}
	if len(c.VolumeMounts) != 1 || len(p.Volumes) != 1 || c.VolumeMounts[0].Name != p.Volumes[0].Name ||
		p.Volumes[0].PersistentVolumeClaim == nil || p.Volumes[0].PersistentVolumeClaim.ClaimName != j.ClaimName() {
		return nil, fmt.Errorf("want one volume, the persistent volume claim %s, mounted once", j.ClaimName())
	}
	if !strings.HasPrefix(c.VolumeMounts[0].MountPath, "/") {
		return nil, fmt.Errorf("mountPath %q is not absolute", c.VolumeMounts[0].MountPath)
	}
	if len(c.Command) != 3 || c.Command[0] != "sh" || c.Command[1] != "-c" {
		return nil, fmt.Errorf("command %q is not sh -c SCRIPT", c.Command)
	}
	return c, nil
}

// guaranteed: the container's requests equal its limits, cpus whole CPUs
// and memory, so that its pod's QoS class is Guaranteed (and the kubelet's
// static CPU manager may give it cores of its own).
func guaranteed(c *corev1.Container, cpus int, memory string) error {
	r, l := c.Resources.Requests, c.Resources.Limits
	want := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(strconv.Itoa(cpus)), corev1.ResourceMemory: resource.MustParse(memory)}
	for name, w := range want {
		rq, lm := r[name], l[name]
		if rq.Cmp(w) != 0 || lm.Cmp(w) != 0 {
			return fmt.Errorf("%s request %s and limit %s, want both %s (requests equal to limits: Guaranteed QoS)", name, rq.String(), lm.String(), w.String())
		}
	}
	if len(r) != len(want) || len(l) != len(want) {
		return fmt.Errorf("requests %v and limits %v: want only cpu and memory, each request equal to its limit", r, l)
	}
	return nil
}

// script is the container's sh -c script.
func script(c *corev1.Container) string { return c.Command[2] }

// env is the value the container's environment gives name.
func env(c *corev1.Container, name string) string {
	i := slices.IndexFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == name })
	if i < 0 {
		return ""
	}
	return c.Env[i].Value
}

// antiAffine reports whether the Job's pods refuse a node that runs one
// of them already.
func antiAffine(job *batchv1.Job) bool {
	a := job.Spec.Template.Spec.Affinity
	if a == nil || a.PodAntiAffinity == nil {
		return false
	}
	labels := job.Spec.Template.Labels
	for _, t := range a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
		if t.TopologyKey != "kubernetes.io/hostname" || t.LabelSelector == nil || len(t.LabelSelector.MatchLabels) == 0 {
			continue
		}
		matches := true
		for k, v := range t.LabelSelector.MatchLabels {
			matches = matches && labels[k] == v
		}
		if matches {
			return true
		}
	}
	return false
}
