// Package batch runs a sharded matrix on a batch engine: Slurm job arrays
// and Kubernetes Indexed Jobs. One Job describes the matrix (the matrix
// command and its flags, the number of shards, a results root on storage
// every task sees, the CPUs a task needs); the Slurm scripts
// (Job.SlurmArray, Job.SlurmMerge) and the Kubernetes manifests
// (Job.Kubernetes) are generated from it, and both run the same task
// (Job.TaskScript: shard i of n into Root/shard-i) and the same merge
// (Job.MergeScript: summarise over every shard's directory, then Check).
//
// Check reads the shards' work directories and says which shards are
// complete and which must run again; a shard resumes its directory, so
// running it again redoes only what it lacks. Submit hands the scripts
// to sbatch, the merge job after the array (afterany), or only the
// incomplete shards with a fresh merge job.
//
//	j := batch.Job{Command: "headline", Shards: 6, Root: "results/headline-shards", CPUs: 4, Dir: repo, Bin: "bin"}
//	files, err := j.WriteSlurm(j.Root)
//	ids, err := batch.Submit(ctx, "sbatch", files, nil)
//
// The command examples/batch wraps it; docs/shards.md is the recipe.
package batch
