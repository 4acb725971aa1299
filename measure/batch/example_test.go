package batch_test

import (
	"fmt"

	"github.com/shakenfist/quicbench/measure/batch"
)

// A six-shard headline matrix as a Slurm job array: one task per shard,
// each with four CPUs and a node of its own.
func ExampleJob() {
	j := batch.Job{Command: "headline", Shards: 6, Root: "results/headline-shards", CPUs: 4,
		Dir: "/srv/quicbench", Bin: "bin", Args: []string{"-losses", "0 1"}}
	if err := j.Validate(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(j.SlurmArray())
	// Output:
	// #!/bin/sh
	// #SBATCH --job-name=quicbench-headline
	// #SBATCH --chdir=/srv/quicbench
	// #SBATCH --output=results/headline-shards/slurm-%A-%a.out
	// #SBATCH --ntasks=1
	// #SBATCH --cpus-per-task=4
	// #SBATCH --array=0-5
	// #SBATCH --exclusive
	// SHARDS=6
	// exec bin/headline -shard "$SLURM_ARRAY_TASK_ID/$SHARDS" -workdir results/headline-shards/shard-"$SLURM_ARRAY_TASK_ID" -no-summary -losses '0 1'
}
