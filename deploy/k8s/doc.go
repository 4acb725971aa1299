// Package k8s checks the Kubernetes manifests that package measure/batch
// generates against the Kubernetes API's own types (k8s.io/api core/v1
// and batch/v1), decoding them strictly: a field the API does not have is
// an error. It is a module of its own, so that importers of quicbench do
// not inherit Kubernetes' dependencies.
//
//	m, err := job.Kubernetes()
//	objects, err := k8s.DecodeManifests(m)
//	err = k8s.Check(job, objects)
//
// DecodeManifests decodes the namespace, the results claim and the two
// Jobs, each one YAML document of its own kind, refusing unknown and
// duplicate fields, a second document and negative counts; Check says
// what in them would not run the description: the Pod Security level, the
// claim's access mode and size, Guaranteed QoS, the deadlines, the names
// that carry the run id, the completion mode, the counts, the SHARDS
// variable, privilege, the anti-affinity, the volume, the scripts. Its
// test is in .ci/run (cd deploy/k8s && go test ./...); deploy/image/test
// runs the pods in the image, apiserver-test posts them to a real API
// server.
package k8s
