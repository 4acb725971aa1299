package k8s

import (
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

// decoder decodes batch/v1 objects, refusing unknown and duplicate
// fields.
var decoder = sync.OnceValues(func() (runtime.Decoder, error) {
	scheme := runtime.NewScheme()
	if err := batchv1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	return serializer.NewCodecFactory(scheme, serializer.EnableStrict).UniversalDeserializer(), nil
})

// Decode reads one manifest as a batch/v1 Job, strictly: a field the API
// does not have, a field given twice, another kind, more than one
// document or a negative count is an error.
func Decode(manifest string) (*batchv1.Job, error) {
	d, err := decoder()
	if err != nil {
		return nil, err
	}
	if n, err := documents(manifest); err != nil {
		return nil, err
	} else if n != 1 {
		return nil, fmt.Errorf("the manifest holds %d YAML documents, not 1: kubectl apply would create each", n)
	}
	obj, gvk, err := d.Decode([]byte(manifest), nil, nil)
	if err != nil {
		return nil, err
	}
	job, ok := obj.(*batchv1.Job)
	if !ok {
		return nil, fmt.Errorf("the manifest is a %s, not a batch/v1 Job", gvk)
	}
	if err := nonNegative(job); err != nil {
		return nil, err
	}
	return job, nil
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

// Check says what in the decoded manifests does not run j: the Indexed
// Job (shards) and the merge Job. Every problem is listed.
func Check(j batch.Job, shards, merge *batchv1.Job) error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	s := shards.Spec
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
	c, err := oneContainer(shards, j, j.CPUs)
	if err != nil {
		bad("%s: %v", shards.Name, err)
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
	if !j.Shared && !antiAffine(shards) {
		bad("no required pod anti-affinity on kubernetes.io/hostname by the pods' own label: two shards may share a node")
	}
	if merge.Spec.CompletionMode != nil && *merge.Spec.CompletionMode == batchv1.IndexedCompletion {
		bad("the merge Job is Indexed: it is one pod")
	}
	if c, err := oneContainer(merge, j, 1); err != nil {
		bad("%s: %v", merge.Name, err)
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

// oneContainer checks the pod template every Job here has (one
// container, restartPolicy Never, the working directory, the CPUs, the
// results claim mounted at the root) and returns its container.
func oneContainer(job *batchv1.Job, j batch.Job, cpus int) (*corev1.Container, error) {
	p := job.Spec.Template.Spec
	if p.RestartPolicy != corev1.RestartPolicyNever {
		return nil, fmt.Errorf("restartPolicy is %q, not Never (a retry is a new pod, which resumes the work directory)", p.RestartPolicy)
	}
	if len(p.Containers) != 1 {
		return nil, fmt.Errorf("%d containers, want 1", len(p.Containers))
	}
	c := &p.Containers[0]
	if c.WorkingDir != j.Dir {
		return nil, fmt.Errorf("workingDir %q, not %q", c.WorkingDir, j.Dir)
	}
	want := resource.MustParse(strconv.Itoa(cpus))
	if r, l := c.Resources.Requests[corev1.ResourceCPU], c.Resources.Limits[corev1.ResourceCPU]; r.Cmp(want) != 0 || l.Cmp(want) != 0 {
		return nil, fmt.Errorf("CPU request %s and limit %s, want both %d", r.String(), l.String(), cpus)
	}
	if len(c.VolumeMounts) != 1 || len(p.Volumes) != 1 || c.VolumeMounts[0].Name != p.Volumes[0].Name ||
		p.Volumes[0].PersistentVolumeClaim == nil || p.Volumes[0].PersistentVolumeClaim.ClaimName == "" {
		return nil, errors.New("want one volume, a persistent volume claim, mounted once")
	}
	if !strings.HasPrefix(c.VolumeMounts[0].MountPath, "/") {
		return nil, fmt.Errorf("mountPath %q is not absolute", c.VolumeMounts[0].MountPath)
	}
	if len(c.Command) != 3 || c.Command[0] != "sh" || c.Command[1] != "-c" {
		return nil, fmt.Errorf("command %q is not sh -c SCRIPT", c.Command)
	}
	return c, nil
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
