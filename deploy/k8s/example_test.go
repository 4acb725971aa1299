package k8s_test

import (
	"fmt"

	"github.com/shakenfist/quicbench/deploy/k8s"
	"github.com/shakenfist/quicbench/measure/batch"
)

// The manifests of a four-shard matrix, decoded and checked.
func Example() {
	j := batch.Job{Command: "headline", Shards: 4, Root: "results/headline-shards", CPUs: 4, Dir: "/usr/src/quicbench", Bin: "bin"}
	shards, merge := j.Kubernetes()
	s, err := k8s.Decode(shards)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := k8s.Decode(merge)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(s.Name, *s.Spec.CompletionMode, *s.Spec.Completions, m.Name, k8s.Check(j, s, m))
	_, err = k8s.Decode("apiVersion: batch/v1\nkind: Job\nspec:\n  completionz: 4\n")
	fmt.Println(err)
	// Output:
	// quicbench-headline Indexed 4 quicbench-headline-merge <nil>
	// strict decoding error: unknown field "spec.completionz"
}
