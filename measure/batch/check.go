package batch

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/shakenfist/quicbench/measure/plan"
	"github.com/shakenfist/quicbench/measure/results"
)

// ShardState is what one shard's work directory holds.
type ShardState struct {
	Shard plan.Shard
	Dir   string
	// Started: the directory has matrix.json, written when the shard's
	// command began.
	Started bool
	// Want is the shard's share of the plan (plan.Merged.ShardPlanned;
	// 0 while no directory holds a run, since the plan is read from the
	// merge); Measured and Failed count its run records.
	Want, Measured, Failed int
	// Problem, when set, says why the directory cannot be this shard's.
	Problem string
	// Count is the shard count the directory's matrix.json names, when
	// it is not the count checked for.
	Count int
}

// complete reports whether the shard measured its whole share.
func (s ShardState) complete() bool {
	return s.Started && s.Problem == "" && s.Want > 0 && s.Measured == s.Want && s.Failed == 0
}

// String is one line: the shard, and what it lacks.
func (s ShardState) String() string {
	switch {
	case s.Problem != "":
		return fmt.Sprintf("shard %s: %s", s.Shard, s.Problem)
	case !s.Started:
		return fmt.Sprintf("shard %s: not started (no %s/matrix.json)", s.Shard, s.Dir)
	case s.complete():
		return fmt.Sprintf("shard %s: complete, %d of %d runs", s.Shard, s.Measured, s.Want)
	case s.Want == 0:
		return fmt.Sprintf("shard %s: incomplete, no run recorded", s.Shard)
	}
	return fmt.Sprintf("shard %s: incomplete, %d of %d runs measured, %d failed", s.Shard, s.Measured, s.Want, s.Failed)
}

// Status is every shard's state and the merge's totals.
type Status struct {
	Shards []ShardState
	// Planned is the matrix's number of runs (0 while no run is
	// recorded); Measured counts the runs measured in every shard.
	Planned, Measured int
}

// Incomplete are the indexes of the shards to run again.
func (st Status) Incomplete() []int {
	var out []int
	for _, s := range st.Shards {
		if !s.complete() {
			out = append(out, s.Shard.Index)
		}
	}
	return out
}

// Write prints one line per shard and a last line with the totals and,
// when shards are incomplete, their indexes as sbatch --array takes them.
func (st Status) Write(w io.Writer, name string) {
	for _, s := range st.Shards {
		fmt.Fprintf(w, "%s: %s\n", name, s)
	}
	fmt.Fprintf(w, "%s: %d of %d planned runs measured", name, st.Measured, st.Planned)
	if inc := st.Incomplete(); len(inc) > 0 {
		fmt.Fprintf(w, "; incomplete shards: %s (resubmit them: sbatch --array=%s with the array's script, or batch -do resubmit)", IndexList(inc), IndexList(inc))
	}
	fmt.Fprintln(w)
}

// shardRecord is the part of matrix.json Check reads.
type shardRecord struct {
	Shard string `json:"shard"`
}

// OtherCount says whether the root holds shards of another count than
// the one checked for: a started shard's matrix.json names another
// count, or the directory of a shard beyond the count is there. Resubmit
// refuses such a root.
func (st Status) OtherCount(root string) error {
	n := len(st.Shards)
	for _, s := range st.Shards {
		if s.Count != 0 {
			return fmt.Errorf("-shards %d: %s/matrix.json is shard %d/%d; give the count the root was run with", n, s.Dir, s.Shard.Index, s.Count)
		}
	}
	if _, err := os.Lstat(ShardDir(root, n)); err == nil {
		return fmt.Errorf("-shards %d: %s is there, a shard beyond %d; give the count the root was run with", n, ShardDir(root, n), n)
	}
	return nil
}

// Check reads the work directories root/shard-0 ... root/shard-(n-1) and
// says what each holds against its share of the matrix. The directories
// that have started must be shards of one matrix (plan.LoadShards); an
// error means they are not, could not be read, or one is a symbolic link
// (a shard's directory is a directory under the root).
func Check(root string, n int) (Status, error) {
	if n < 1 || n > plan.MaxShards {
		return Status{}, fmt.Errorf("shards %d: give 1 to %d", n, plan.MaxShards)
	}
	var st Status
	var started []string
	for i := range n {
		s := ShardState{Shard: plan.Shard{Index: i, Count: n}, Dir: ShardDir(root, i)}
		if fi, err := os.Lstat(s.Dir); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			return Status{}, fmt.Errorf("%s is a symbolic link: a shard's directory must be a directory under the root; move what it points to there in its place", s.Dir)
		}
		var rec shardRecord
		err := results.ReadJSON(filepath.Join(s.Dir, "matrix.json"), &rec)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return Status{}, err
		case rec.Shard != s.Shard.String():
			s.Started, s.Problem = true, fmt.Sprintf("%s holds shard %q, not %s", s.Dir, rec.Shard, s.Shard)
			if sh, err := plan.ParseShard(rec.Shard); err == nil && sh.Count != n {
				s.Count = sh.Count
			}
		default:
			s.Started = true
			l, err := results.Scan(s.Dir)
			if err != nil {
				return Status{}, err
			}
			for _, r := range l.Runs {
				if r.Failed != "" {
					s.Failed++
				} else {
					s.Measured++
				}
			}
			if len(l.Runs) > 0 {
				started = append(started, s.Dir)
			}
		}
		st.Measured += s.Measured
		st.Shards = append(st.Shards, s)
	}
	if len(started) == 0 {
		return st, nil
	}
	merged, err := plan.LoadShards(started)
	if err != nil {
		return Status{}, err
	}
	if merged.Shards != n {
		return Status{}, fmt.Errorf("the directories under %s are shards of %d, not %d", root, merged.Shards, n)
	}
	st.Planned = merged.Planned
	for i := range st.Shards {
		st.Shards[i].Want = merged.ShardPlanned[i]
	}
	return st, nil
}
