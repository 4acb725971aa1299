package k8s_test

import (
	"fmt"

	"github.com/shakenfist/quicbench/deploy/k8s"
	"github.com/shakenfist/quicbench/measure/batch"
)

// The manifests of a four-shard matrix, decoded and checked.
func Example() {
	j := batch.Job{Command: "headline", Shards: 4, Root: "results/headline-shards", CPUs: 4, Dir: "/usr/src/quicbench", Bin: "bin",
		RunID: "run1", Time: "120"}
	m, err := j.Kubernetes()
	if err != nil {
		fmt.Println(err)
		return
	}
	o, err := k8s.DecodeManifests(m)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(o.Namespace.Name, o.Claim.Name, o.Claim.Spec.AccessModes)
	fmt.Println(o.Shards.Name, *o.Shards.Spec.CompletionMode, *o.Shards.Spec.Completions, *o.Shards.Spec.Template.Spec.ActiveDeadlineSeconds)
	fmt.Println(o.Merge.Name, k8s.Check(j, o))
	_, err = k8s.Decode("apiVersion: batch/v1\nkind: Job\nspec:\n  completionz: 4\n")
	fmt.Println(err)
	// Output:
	// quicbench quicbench-headline-run1-results [ReadWriteMany]
	// quicbench-headline-run1 Indexed 4 7200
	// quicbench-headline-run1-merge <nil>
	// strict decoding error: unknown field "spec.completionz"
}
