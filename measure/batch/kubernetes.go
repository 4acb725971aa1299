package batch

import (
	"cmp"
	"fmt"
	"path"
	"strconv"
	"strings"
)

// The image and the volume claim when Job leaves them empty.
const (
	DefaultImage = "quicbench:latest"
	DefaultClaim = "quicbench-results"
)

// BackoffLimitPerIndex is how many times the Indexed Job retries one
// shard's pod; each retry resumes the shard's work directory.
const BackoffLimitPerIndex = 2

// Kubernetes is the Indexed Job that runs the shards (completion index i
// runs shard i) and the Job that merges them, to apply once the first
// has finished, as YAML. Every pod mounts Claim at Root.
func (j Job) Kubernetes() (shards, merge string) {
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
`, j.JobName())
	}
	shards = fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata:
  name: %s
spec:
  completionMode: Indexed
  completions: %d
  parallelism: %d
  backoffLimitPerIndex: %d
  template:
    metadata:
      labels:
        app: %s
    spec:
      restartPolicy: Never
%s%s`, j.JobName(), j.Shards, j.Shards, BackoffLimitPerIndex, j.JobName(), affinity,
		j.container(j.Command, j.TaskScript("JOB_COMPLETION_INDEX"), j.CPUs, env, true))
	merge = fmt.Sprintf(`apiVersion: batch/v1
kind: Job
metadata:
  name: %s-merge
spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
%s`, j.JobName(), j.container("merge", j.MergeScript(), 1, "", false))
	return shards, merge
}

// container is a pod's one container running script under sh -c, with
// the results volume, and the volume itself.
func (j Job) container(name, script string, cpus int, env string, privileged bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, `      containers:
      - name: %s
        image: %s
        workingDir: %s
        command:
        - sh
        - -c
        - |
`, name, cmp.Or(j.Image, DefaultImage), j.Dir)
	for _, l := range strings.Split(strings.TrimRight(script, "\n"), "\n") {
		b.WriteString("          " + l + "\n")
	}
	b.WriteString(env)
	fmt.Fprintf(&b, "        resources:\n          requests:\n            cpu: %q\n          limits:\n            cpu: %q\n", strconv.Itoa(cpus), strconv.Itoa(cpus))
	if privileged {
		b.WriteString("        securityContext:\n          privileged: true\n")
	}
	fmt.Fprintf(&b, `        volumeMounts:
        - name: results
          mountPath: %s
      volumes:
      - name: results
        persistentVolumeClaim:
          claimName: %s
`, j.mountPath(), cmp.Or(j.Claim, DefaultClaim))
	return b.String()
}

// mountPath is Root as an absolute path in the container.
func (j Job) mountPath() string {
	if path.IsAbs(j.Root) {
		return path.Clean(j.Root)
	}
	return path.Join(j.Dir, j.Root)
}
