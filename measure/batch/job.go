package batch

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/shakenfist/quicbench/measure/plan"
)

// Commands are the matrix commands a Job can run: the examples that take
// -shard, -workdir and -no-summary.
var Commands = []string{"headline", "priority", "ccarm", "sessions", "capped", "cpucost"}

// Job describes one sharded matrix as a batch engine runs it. The Slurm
// scripts and the Kubernetes manifests are both generated from it.
type Job struct {
	// Command is the matrix command (one of Commands); Args are further
	// flags for it, the same for every shard.
	Command string
	Args    []string
	// Shards is how many shards the matrix is split into: one task each.
	Shards int
	// Root is the results root on storage every task sees: shard i
	// writes Root/shard-i, the merge writes Root/summary.md and
	// Root/summary.json. Relative to Dir unless absolute.
	Root string
	// CPUs is how many CPUs each task asks for.
	CPUs int
	// Shared lets tasks share a node. By default each task has a node
	// of its own, so that two timing runs never share a core.
	Shared bool
	// Bin is the directory holding the built commands (go build -o bin/
	// ./examples/...); empty runs them with go run ./examples/NAME.
	Bin string
	// Dir is the directory the tasks start in: the repository's root on
	// the nodes (Slurm) or in the image (Kubernetes). It must be
	// absolute.
	Dir string
	// Name names the job; the merge job is Name-merge. Empty is
	// quicbench-Command.
	Name string
	// Partition and Time are Slurm's --partition and --time, if set.
	Partition, Time string
	// Image is Kubernetes' container image.
	Image string
	// RunID names this run's Kubernetes objects (KubeName), so that two
	// runs never collide.
	RunID string
	// Namespace is the Kubernetes namespace, generated with the Pod
	// Security label the privileged shards need; empty is
	// DefaultNamespace.
	Namespace string
	// Claim is an existing ReadWriteMany volume claim to mount at Root;
	// empty generates one, ClaimName, of Storage (empty: DefaultStorage)
	// in StorageClass (empty: the cluster's default).
	Claim, Storage, StorageClass string
	// Memory is each pod's memory request and limit (empty:
	// DefaultMemory); the CPU request and limit are CPUs, so the pods'
	// QoS class is Guaranteed.
	Memory string
}

// nameRE is what a Kubernetes object name allows (a DNS label), which
// also suits Slurm; the merge job's suffix must still fit in 63.
var nameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,55}[a-z0-9])?$`)

// reserved are the command's flags the job sets itself.
var reserved = []string{"shard", "workdir", "no-summary", "serve", "remote"}

// jobName is Name, or quicbench-Command when Name is empty.
func (j Job) jobName() string {
	if j.Name != "" {
		return j.Name
	}
	return "quicbench-" + j.Command
}

// Validate checks the description; the error names the field and what it
// takes.
func (j Job) Validate() error {
	var errs []error
	if !slices.Contains(Commands, j.Command) {
		errs = append(errs, fmt.Errorf("command %q is not a matrix command: give one of %s", j.Command, strings.Join(Commands, ", ")))
	}
	if j.Shards < 1 || j.Shards > plan.MaxShards {
		errs = append(errs, fmt.Errorf("shards %d: give 1 to %d", j.Shards, plan.MaxShards))
	}
	if j.CPUs < 1 {
		errs = append(errs, fmt.Errorf("cpus %d: a task needs at least 1", j.CPUs))
	}
	for _, f := range []struct{ what, v string }{{"root", j.Root}, {"dir", j.Dir}, {"bin", j.Bin},
		{"partition", j.Partition}, {"time", j.Time}, {"image", j.Image}, {"claim", j.Claim}} {
		if strings.ContainsAny(f.v, " \t\n\r%'\"\\$`") {
			errs = append(errs, fmt.Errorf("%s %q: no spaces, quotes, $, %%, ` or backslashes (it goes into #SBATCH lines and shell commands)", f.what, f.v))
		}
	}
	if j.Root == "" {
		errs = append(errs, errors.New("root is empty: give the results directory on storage every task sees"))
	}
	if !path.IsAbs(j.Dir) {
		errs = append(errs, fmt.Errorf("dir %q is not absolute: give the repository's root as the tasks see it", j.Dir))
	}
	if !nameRE.MatchString(j.jobName()) {
		errs = append(errs, fmt.Errorf("name %q: lower-case letters, digits and -, at most 57, starting and ending with a letter or digit", j.jobName()))
	}
	for _, f := range []struct{ what, v string }{{"root", j.Root}, {"dir", j.Dir}, {"bin", j.Bin}, {"name", j.Name},
		{"partition", j.Partition}, {"time", j.Time}, {"image", j.Image}, {"claim", j.Claim}} {
		if err := manifestSafe(f.v, false); err != nil {
			errs = append(errs, fmt.Errorf("%s %q: %w", f.what, f.v, err))
		}
	}
	for _, a := range j.Args {
		if err := manifestSafe(a, true); err != nil {
			errs = append(errs, fmt.Errorf("the command's argument %q: %w", a, err))
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && slices.Contains(reserved, name) {
			errs = append(errs, fmt.Errorf("the command's flag %s is the job's to set (each shard gets -shard, -workdir and -no-summary; -serve and -remote are not for shards)", a))
		}
	}
	return errors.Join(errs...)
}

// manifestSafe refuses what would not stay one value in the generated
// YAML: a character YAML reads as a line break other than \n (\r, U+0085,
// U+2028, U+2029), \n itself unless newline, a byte-order mark, and any
// character YAML does not allow in a document.
func manifestSafe(s string, newline bool) error {
	if !utf8.ValidString(s) {
		return errors.New("not valid UTF-8")
	}
	for _, r := range s {
		ok := r == '\t' || (r == '\n' && newline) || (r >= 0x20 && r <= 0x7e) ||
			(r >= 0xa0 && r <= 0xd7ff && r != 0x2028 && r != 0x2029) || (r >= 0xe000 && r <= 0xfffd && r != 0xfeff) || r >= 0x10000
		if !ok {
			return fmt.Errorf("the character %U is a line break or a control character in YAML and would change the Kubernetes manifest; give the value without it", r)
		}
	}
	return nil
}

// ShardDir is shard i's work directory under root.
func ShardDir(root string, i int) string { return path.Join(root, fmt.Sprintf("shard-%d", i)) }

// program is how a task starts the command name, as shell words.
func (j Job) program(name string) string {
	if j.Bin == "" {
		return "go run " + quote("./examples/"+name)
	}
	return quote(path.Join(j.Bin, name))
}

// TaskScript is the shell text a task runs, the same on every engine:
// shard $index of $SHARDS into Root/shard-$index. index is the variable
// the engine sets (SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX); SHARDS
// must hold the count. The command replaces the shell, so the engine's
// signals reach it.
func (j Job) TaskScript(index string) string {
	words := []string{"exec", j.program(j.Command),
		"-shard", `"$` + index + `/$SHARDS"`,
		"-workdir", quote(j.Root) + `/shard-"$` + index + `"`,
		"-no-summary"}
	for _, a := range j.Args {
		words = append(words, quote(a))
	}
	return strings.Join(words, " ") + "\n"
}

// MergeScript is the shell text of the merge: summarise every shard
// directory that a task has started into Root/summary.md and
// Root/summary.json, then check every shard (batch -do check), and exit
// non-zero if a step failed or a shard is incomplete.
func (j Job) MergeScript() string {
	var dirs []string
	for i := range j.Shards {
		dirs = append(dirs, quote(ShardDir(j.Root, i)))
	}
	root := quote(j.Root)
	return fmt.Sprintf(`status=0
set --
for d in %s; do
  if [ -f "$d/matrix.json" ]; then set -- "$@" "$d"; fi
done
if [ "$#" -gt 0 ]; then
  %s "$@" > %s/summary.md || status=1
  %s -json "$@" > %s/summary.json || status=1
fi
%s -do check -root %s -shards %d || status=1
exit $status
`, strings.Join(dirs, " "), j.program("summarise"), root, j.program("summarise"), root,
		j.program("batch"), root, j.Shards)
}

// quote makes s one shell word.
func quote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=,+@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
