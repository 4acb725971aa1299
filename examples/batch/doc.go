// Command batch runs a matrix command's shards on a batch engine, Slurm or
// Kubernetes, from one description (package measure/batch): the matrix
// command and its flags (after --), the number of shards, a results root
// on storage every task sees, the CPUs a task needs, and whether tasks may
// share a node.
//
//	go build -o bin/ ./examples/...
//	go run ./examples/batch -do submit -shards 6 -cpus 4 -bin bin -root results/headline-shards -- -repeats 5
//	squeue --me
//	cat results/headline-shards/summary.md
//	go run ./examples/batch -do resubmit -shards 6 -cpus 4 -bin bin -root results/headline-shards -- -repeats 5
//	go run ./examples/batch -do kubernetes -shards 6 -bin bin -time 120 -run-id r1 -image registry.example/quicbench:v1 -out results/headline-k8s -- -repeats 5
//
// -do slurm writes the sbatch scripts (NAME.sbatch, NAME-merge.sbatch)
// into -out, by default the root; submit also submits them, the merge job
// after every array task has ended (afterany); resubmit checks the shards
// and submits only the incomplete ones with a fresh merge job; check is
// what the merge job runs after summarise: one line per shard, exit 1 when
// one is incomplete; kubernetes writes NAME-RUNID-namespace.yaml (the
// namespace, labelled for Pod Security's privileged level),
// NAME-RUNID-claim.yaml (the ReadWriteMany results claim, unless -claim
// names one), NAME-RUNID.yaml (the Indexed Job) and NAME-RUNID-merge.yaml,
// every pod with Guaranteed QoS and -time as its deadline; bash
// deploy/image/build builds the image. docs/shards.md is the recipe.
package main
