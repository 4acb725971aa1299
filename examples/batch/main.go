package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/internal/cli"
	"github.com/shakenfist/quicbench/measure/batch"
)

// modes are -do's values.
var modes = []string{"slurm", "submit", "resubmit", "check", "kubernetes"}

// usage heads the -h text, above the flags.
const usage = `usage: batch -do MODE -shards N [flags] [-- matrix command flags]

Runs a matrix command's shards on a batch engine, from one description:
  slurm       write the job array's and the merge job's sbatch scripts
  submit      write them and submit both (the merge after the array ends)
  resubmit    check the shards, then submit only the incomplete ones and a
              fresh merge job
  check       say which shards are complete (the merge job runs this);
              exit 1 when any is not
  kubernetes  write the Indexed Job and the merge Job as YAML
Flags after -- go to every shard's command.

`

// options are the command's flags beside the job.
type options struct {
	do, out, sbatch string
	job             batch.Job
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is the command; it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parse(args, stderr)
	if err != nil {
		return cli.Exit(stderr, "batch", err)
	}
	if err := o.do1(ctx, stdout); err != nil {
		if errors.Is(err, errIncomplete) {
			return 1
		}
		if u, ok := errors.AsType[usageError](err); ok {
			return cli.Exit(stderr, "batch", u.error)
		}
		fmt.Fprintf(stderr, "batch: %s\n", cli.Line(err))
		return 1
	}
	return 0
}

// parse reads the flags and fills in the job's defaults.
func parse(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("batch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage); fs.PrintDefaults() }
	o := &options{}
	j := &o.job
	fs.StringVar(&o.do, "do", "slurm", "what to do: "+strings.Join(modes, ", "))
	fs.StringVar(&j.Command, "command", "headline", "the matrix command: "+strings.Join(batch.Commands, ", "))
	fs.IntVar(&j.Shards, "shards", 0, "how many shards (one task each)")
	fs.StringVar(&j.Root, "root", "", "results root on storage every task sees; shard i writes ROOT/shard-i (default results/COMMAND-shards)")
	fs.IntVar(&j.CPUs, "cpus", 2, "CPUs each task asks for")
	fs.BoolVar(&j.Shared, "shared", false, "let tasks share a node (by default each has a node of its own, so no two runs share a core)")
	fs.StringVar(&j.Bin, "bin", "", "directory of the built commands, relative to -dir (go build -o bin/ ./examples/...); empty: go run ./examples/NAME")
	fs.StringVar(&j.Dir, "dir", "", "the repository's root where the tasks run (default: this directory for Slurm, /usr/src/quicbench in the image for Kubernetes)")
	fs.StringVar(&j.Name, "name", "", "job name (default quicbench-COMMAND); the merge job is NAME-merge")
	fs.StringVar(&j.Partition, "partition", "", "Slurm partition")
	fs.StringVar(&j.Time, "time", "", "time limit per task, as Slurm's --time takes it (minutes, M:S, H:M:S, D-H, D-H:M or D-H:M:S); Kubernetes: each pod's activeDeadlineSeconds, required")
	fs.StringVar(&j.Image, "image", batch.DefaultImage, "Kubernetes: the container image (bash deploy/image/build builds it)")
	fs.StringVar(&j.Claim, "claim", "", "Kubernetes: an existing ReadWriteMany volume claim to mount at the root (default: generate NAME-RUNID-results)")
	fs.StringVar(&j.RunID, "run-id", "", "Kubernetes: this run's id, in every object's name (NAME-RUNID), so two runs never collide; the same id again resumes the run (default: the time now, UTC, as YYYYMMDD-HHMMSS)")
	fs.StringVar(&j.Namespace, "namespace", batch.DefaultNamespace, "Kubernetes: the namespace, generated with the Pod Security label privileged (the shards' containers are privileged)")
	fs.StringVar(&j.Memory, "memory", batch.DefaultMemory, "Kubernetes: each pod's memory request and limit (requests equal limits: Guaranteed QoS)")
	fs.StringVar(&j.Storage, "storage", batch.DefaultStorage, "Kubernetes: the size of the generated results claim")
	fs.StringVar(&j.StorageClass, "storage-class", "", "Kubernetes: the generated claim's storage class, one that provides ReadWriteMany (default: the cluster's default class)")
	fs.StringVar(&o.out, "out", "", "directory for the scripts or manifests (default: the root, under -dir for Slurm)")
	fs.StringVar(&o.sbatch, "sbatch", "sbatch", "the sbatch program")
	if err := cli.ParseWithArgs(fs, args); err != nil {
		return nil, err
	}
	if rest := fs.Args(); len(rest) > 0 {
		if n := len(args) - len(rest); n == 0 || args[n-1] != "--" {
			return nil, fmt.Errorf("unexpected arguments %q: put the matrix command's flags after --", rest)
		}
		j.Args = rest
	}
	if !slices.Contains(modes, o.do) {
		return nil, fmt.Errorf("-do %q: give one of %s", o.do, strings.Join(modes, ", "))
	}
	if j.Shards == 0 {
		return nil, errors.New("-shards: give the number of shards")
	}
	return o, o.defaults()
}

// defaults fills in the root, the directory and the output directory,
// then validates the job.
func (o *options) defaults() error {
	j := &o.job
	if j.Root == "" {
		j.Root = "results/" + j.Command + "-shards"
	}
	if j.Dir == "" && o.do == "kubernetes" {
		j.Dir = "/usr/src/quicbench"
	} else if j.Dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return err
		}
		j.Dir = wd
	}
	if j.RunID == "" && o.do == "kubernetes" {
		j.RunID = time.Now().UTC().Format("20060102-150405")
	}
	if o.out == "" && o.do == "kubernetes" {
		o.out = j.Root
	} else if o.out == "" {
		o.out = o.root()
	}
	if o.do == "check" {
		// Only the root and the count matter.
		return nil
	}
	return j.Validate()
}

// root is the results root as this process finds it: under -dir when
// relative, as the tasks find it.
func (o *options) root() string {
	if filepath.IsAbs(o.job.Root) {
		return o.job.Root
	}
	return filepath.Join(o.job.Dir, o.job.Root)
}

// usageError is a flag that disagrees with what is on disk: exit 2.
type usageError struct{ error }

// errIncomplete: check found shards to run again (already printed).
var errIncomplete = errors.New("incomplete shards")

// do1 does what -do asks.
func (o *options) do1(ctx context.Context, stdout io.Writer) error {
	j := o.job
	switch o.do {
	case "check":
		st, err := batch.Check(o.root(), j.Shards)
		if err != nil {
			return err
		}
		st.Write(stdout, "batch")
		if len(st.Incomplete()) > 0 {
			return errIncomplete
		}
		return nil
	case "kubernetes":
		return o.writeKubernetes(stdout)
	}
	var st batch.Status
	if o.do == "resubmit" {
		var err error
		if st, err = batch.Check(o.root(), j.Shards); err != nil {
			return err
		}
		if err := st.OtherCount(o.root()); err != nil {
			return usageError{err}
		}
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	files, err := j.WriteSlurm(o.out)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "batch: wrote %s and %s\n", files.Array, files.Merge)
	switch o.do {
	case "submit":
		return o.submit(ctx, stdout, files, nil)
	case "resubmit":
		st.Write(stdout, "batch")
		inc := st.Incomplete()
		if len(inc) == 0 {
			fmt.Fprintln(stdout, "batch: every shard is complete; nothing to resubmit")
			return nil
		}
		return o.submit(ctx, stdout, files, inc)
	}
	fmt.Fprintf(stdout, "batch: submit with: jid=$(sbatch --parsable %s) && sbatch --dependency=afterany:$jid %s\n", files.Array, files.Merge)
	return nil
}

// submit hands the scripts to sbatch and says how to follow the jobs.
func (o *options) submit(ctx context.Context, stdout io.Writer, files batch.SlurmFiles, indexes []int) error {
	sbatch, err := batch.LookSbatch(o.sbatch)
	if err != nil {
		return err
	}
	ids, err := batch.Submit(ctx, sbatch, files, indexes)
	if err != nil {
		return err
	}
	which := fmt.Sprintf("0-%d", o.job.Shards-1)
	if len(indexes) > 0 {
		which = batch.IndexList(indexes)
	}
	fmt.Fprintf(stdout, "batch: submitted array job %s (shards %s of %d) and merge job %s (after every task ends)\n", ids.Array, which, o.job.Shards, ids.Merge)
	fmt.Fprintf(stdout, "batch: follow with: squeue -j %s,%s; the merge writes %s/summary.md\n", ids.Array, ids.Merge, o.job.Root)
	return nil
}

// writeKubernetes writes the namespace, the claim (unless -claim names
// one), the Indexed Job and the merge Job into -out, one document each.
func (o *options) writeKubernetes(stdout io.Writer) error {
	m, err := o.job.Kubernetes()
	if err != nil {
		return usageError{err}
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	name := o.job.KubeName()
	var files []string
	for _, f := range []struct{ suffix, text string }{
		{"-namespace", m.Namespace}, {"-claim", m.Claim}, {"", m.Shards}, {"-merge", m.Merge}} {
		if f.text == "" {
			continue
		}
		p := filepath.Join(o.out, name+f.suffix+".yaml")
		if err := os.WriteFile(p, []byte(f.text), 0o644); err != nil {
			return err
		}
		files = append(files, p)
	}
	merge := files[len(files)-1]
	fmt.Fprintf(stdout, "batch: wrote %s\n", strings.Join(files, ", "))
	fmt.Fprintf(stdout, "batch: apply with: kubectl apply -f %s; then, once the wait in docs/shards.md ends: kubectl apply -f %s\n",
		strings.Join(files[:len(files)-1], " -f "), merge)
	return nil
}
