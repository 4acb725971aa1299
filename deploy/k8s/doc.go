// Package k8s checks the Kubernetes manifests that package measure/batch
// generates against the Kubernetes API's own types (k8s.io/api batch/v1),
// decoding them strictly: a field the API does not have is an error. It is
// a module of its own, so that importers of quicbench do not inherit
// Kubernetes' dependencies.
//
//	shards, merge := job.Kubernetes()
//	s, err := k8s.Decode(shards)
//	m, err := k8s.Decode(merge)
//	err = k8s.Check(job, s, m)
//
// Decode refuses unknown and duplicate fields and any kind but a batch/v1
// Job; Check says what in the decoded Jobs would not run the description:
// the completion mode, the counts, the SHARDS variable, privilege, the
// CPUs, the anti-affinity, the volume, the scripts. Its test is in .ci/run
// (cd deploy/k8s && go test ./...).
package k8s
