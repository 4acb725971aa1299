package batch

import (
	"cmp"
	"errors"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
)

// The Kubernetes settings when Job leaves them empty.
const (
	DefaultImage     = "quicbench:latest"
	DefaultNamespace = "quicbench"
	DefaultMemory    = "2Gi"
	DefaultStorage   = "5Gi"
)

// BackoffLimitPerIndex is how many times the Indexed Job retries one
// shard's pod; each retry resumes the shard's work directory.
const BackoffLimitPerIndex = 2

// PodSecurityLevel is the Pod Security Admission level the namespace
// enforces: the shards' containers are privileged.
const PodSecurityLevel = "privileged"

// RunLabel is the label every generated object carries, valued RunID.
const RunLabel = "quicbench.shakenfist.io/run"

// maxKubeName bounds KubeName, so that NAME-RUNID-results, the merge
// Job's name and an Indexed Job pod's hostname (NAME-RUNID-INDEX) stay
// within a DNS label's 63 characters.
const maxKubeName = 52

var (
	runIDRE    = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)
	quantityRE = regexp.MustCompile(`^[1-9][0-9]{0,5}(Ki|Mi|Gi|Ti)$`)
	// A storage class name is a DNS subdomain.
	subdomainRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$`)
)

// Manifests are the Kubernetes objects that run a Job, one YAML document
// each, in the order to apply them: the namespace, the results claim
// (empty when Job.Claim names an existing one), the Indexed Job of the
// shards, and the merge Job, to apply once the first has ended.
type Manifests struct {
	Namespace, Claim, Shards, Merge string
}

// KubeName is the Indexed Job's name, JobName-RunID; the merge Job is
// KubeName-merge and the generated claim KubeName-results.
func (j Job) KubeName() string { return j.jobName() + "-" + j.RunID }

// ClaimName is the claim mounted at Root: Claim, or the generated
// KubeName-results.
func (j Job) ClaimName() string { return cmp.Or(j.Claim, j.KubeName()+"-results") }

// Deadline is Time in seconds: each pod's activeDeadlineSeconds, as
// Slurm's --time bounds each task.
func (j Job) Deadline() (int64, error) { return slurmSeconds(j.Time) }

// validateKubernetes checks what only the manifests use.
func (j Job) validateKubernetes() error {
	var errs []error
	if !runIDRE.MatchString(j.RunID) {
		errs = append(errs, fmt.Errorf("run id %q: lower-case letters, digits and -, starting and ending with a letter or digit (it names the Jobs and the claim)", j.RunID))
	} else if len(j.KubeName()) > maxKubeName {
		errs = append(errs, fmt.Errorf("name and run id %q: %d characters, at most %d (the claim, the merge Job and the pods' host names add to it)", j.KubeName(), len(j.KubeName()), maxKubeName))
	}
	if _, err := j.Deadline(); err != nil {
		errs = append(errs, fmt.Errorf("time %q: %w; it becomes each pod's activeDeadlineSeconds", j.Time, err))
	}
	if ns := cmp.Or(j.Namespace, DefaultNamespace); !nameRE.MatchString(ns) {
		errs = append(errs, fmt.Errorf("namespace %q: lower-case letters, digits and -, at most 57, starting and ending with a letter or digit", ns))
	}
	if j.Claim != "" && !subdomainRE.MatchString(j.Claim) {
		errs = append(errs, fmt.Errorf("claim %q: lower-case letters, digits, - and ., starting and ending with a letter or digit", j.Claim))
	}
	for _, q := range []struct{ what, v string }{{"memory", cmp.Or(j.Memory, DefaultMemory)}, {"storage", cmp.Or(j.Storage, DefaultStorage)}} {
		if !quantityRE.MatchString(q.v) {
			errs = append(errs, fmt.Errorf("%s %q: give a whole number of Ki, Mi, Gi or Ti, e.g. 2Gi", q.what, q.v))
		}
	}
	if j.StorageClass != "" && !subdomainRE.MatchString(j.StorageClass) {
		errs = append(errs, fmt.Errorf("storage class %q: lower-case letters, digits, - and ., starting and ending with a letter or digit", j.StorageClass))
	}
	return errors.Join(errs...)
}

// slurmSeconds reads a time limit as Slurm's --time takes it: minutes,
// minutes:seconds, hours:minutes:seconds, days-hours,
// days-hours:minutes or days-hours:minutes:seconds.
func slurmSeconds(s string) (int64, error) {
	if s == "" {
		return 0, errors.New("no time limit: give one as Slurm's --time takes it, e.g. 120 (minutes) or 2:00:00")
	}
	days, rest, hasDays := strings.Cut(s, "-")
	var d int64
	if !hasDays {
		rest = s
	} else {
		var err error
		if d, err = timeField(days); err != nil {
			return 0, err
		}
	}
	parts := strings.Split(rest, ":")
	if len(parts) > 3 {
		return 0, errors.New("more than three fields separated by colons")
	}
	var f []int64
	for _, p := range parts {
		v, err := timeField(p)
		if err != nil {
			return 0, err
		}
		f = append(f, v)
	}
	var secs int64
	switch {
	case hasDays: // days-hours[:minutes[:seconds]]
		secs = d * 86400
		for i, mul := range []int64{3600, 60, 1}[:len(f)] {
			secs += f[i] * mul
		}
	case len(f) == 1: // minutes
		secs = f[0] * 60
	case len(f) == 2: // minutes:seconds
		secs = f[0]*60 + f[1]
	default: // hours:minutes:seconds
		secs = f[0]*3600 + f[1]*60 + f[2]
	}
	if secs < 1 || secs > 365*86400 {
		return 0, fmt.Errorf("%d s: give 1 s to 365 days", secs)
	}
	return secs, nil
}

// timeField is one number of a Slurm time.
func timeField(s string) (int64, error) {
	if s == "" || len(s) > 6 || strings.Trim(s, "0123456789") != "" {
		return 0, fmt.Errorf("%q is not a number of at most 6 digits", s)
	}
	return strconv.ParseInt(s, 10, 64)
}

// Kubernetes is the manifests that run the shards (completion index i
// runs shard i) and the merge. It refuses a description that Validate
// refuses, and one without a valid RunID or Time.
func (j Job) Kubernetes() (Manifests, error) {
	if err := errors.Join(j.Validate(), j.validateKubernetes()); err != nil {
		return Manifests{}, err
	}
	deadline, _ := j.Deadline()
	name, ns := j.KubeName(), cmp.Or(j.Namespace, DefaultNamespace)
	var m Manifests
	m.Namespace = fmt.Sprintf(`apiVersion: v1
kind: Namespace
metadata:
  name: %s
  labels:
    pod-security.kubernetes.io/enforce: %s
    pod-security.kubernetes.io/warn: %s
    pod-security.kubernetes.io/audit: %s
`, ns, PodSecurityLevel, PodSecurityLevel, PodSecurityLevel)
	if j.Claim == "" {
		class := ""
		if j.StorageClass != "" {
			class = "  storageClassName: " + j.StorageClass + "\n"
		}
		m.Claim = fmt.Sprintf(`apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: %s
  namespace: %s
  labels:
    %s: %s
spec:
  accessModes:
  - ReadWriteMany
%s  resources:
    requests:
      storage: %s
`, j.ClaimName(), ns, RunLabel, j.RunID, class, cmp.Or(j.Storage, DefaultStorage))
	}
	// The count, as the task line reads it, in the pod's environment.
	env := fmt.Sprintf("        env:\n        - name: SHARDS\n          value: %s\n", strconv.Quote(strconv.Itoa(j.Shards)))
	affinity := ""
	if !j.Shared {
		affinity = fmt.Sprintf(`      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - labelSelector:
              matchLabels:
                app: %s
            topologyKey: kubernetes.io/hostname
`, j.jobName())
	}
	m.Shards = fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata:
  name: %s
  namespace: %s
  labels:
    %s: %s
spec:
  completionMode: Indexed
  completions: %d
  parallelism: %d
  backoffLimitPerIndex: %d
  maxFailedIndexes: 0
  activeDeadlineSeconds: %d
  template:
    metadata:
      labels:
        app: %s
        %s: %s
    spec:
      restartPolicy: Never
      activeDeadlineSeconds: %d
%s%s`, name, ns, RunLabel, j.RunID, j.Shards, j.Shards, BackoffLimitPerIndex, deadline*(BackoffLimitPerIndex+1),
		j.jobName(), RunLabel, j.RunID, deadline, affinity,
		j.container(j.Command, j.TaskScript("JOB_COMPLETION_INDEX"), j.CPUs, env, true))
	m.Merge = fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata:
  name: %s-merge
  namespace: %s
  labels:
    %s: %s
spec:
  backoffLimit: 0
  activeDeadlineSeconds: %d
  template:
    metadata:
      labels:
        %s: %s
    spec:
      restartPolicy: Never
      activeDeadlineSeconds: %d
%s`, name, ns, RunLabel, j.RunID, deadline, RunLabel, j.RunID, deadline,
		j.container("merge", j.MergeScript(), 1, "", false))
	return m, nil
}

// container is a pod's one container running script under sh -c, with
// requests equal to limits (Guaranteed QoS) and the results volume, and
// the volume itself.
func (j Job) container(name, script string, cpus int, env string, privileged bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, `      containers:
      - name: %s
        image: %q
        workingDir: %q
        command:
        - sh
        - -c
        - |
`, name, cmp.Or(j.Image, DefaultImage), j.Dir)
	for _, l := range strings.Split(strings.TrimRight(script, "\n"), "\n") {
		b.WriteString("          " + l + "\n")
	}
	b.WriteString(env)
	mem := cmp.Or(j.Memory, DefaultMemory)
	b.WriteString("        resources:\n")
	for _, kind := range []string{"requests", "limits"} {
		fmt.Fprintf(&b, "          %s:\n            cpu: %q\n            memory: %s\n", kind, strconv.Itoa(cpus), mem)
	}
	if privileged {
		b.WriteString("        securityContext:\n          privileged: true\n")
	}
	fmt.Fprintf(&b, `        volumeMounts:
        - name: results
          mountPath: %q
      volumes:
      - name: results
        persistentVolumeClaim:
          claimName: %s
`, j.mountPath(), j.ClaimName())
	return b.String()
}

// mountPath is Root as an absolute path in the container.
func (j Job) mountPath() string {
	if path.IsAbs(j.Root) {
		return path.Clean(j.Root)
	}
	return path.Join(j.Dir, j.Root)
}
