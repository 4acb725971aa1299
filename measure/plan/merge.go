package plan

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
)

// matrixFromRecord rebuilds the matrix a matrix.json describes, enough to
// plan it: profiles parsed back from their text, and every other field
// that decides the plan. The matrix's own axes come back as NewAxis axes
// that only name their values in the cell: what a value changed in a run
// is not recorded, and planning needs only the runs' directories. It does
// not check that this machine could run it (the congestion controls, the
// privilege).
func matrixFromRecord(rec matrixRecord) (*Matrix, error) {
	m := &Matrix{
		Losses: rec.Losses, CCs: rec.CCs, Arms: rec.Arms, Repeats: rec.Repeats,
		Workload: rec.Workload, Workdir: rec.Workdir, Qlog: rec.Qlog,
		Link: shapedlink.Options{Backend: shapedlink.Backend(rec.Backend), Seed: rec.Seed, Offload: rec.Offload.mode(),
			EmulatorKeepAwake: rec.KeepAwake, EmulatorDepartureWindow: rec.DepartureWindow},
		Sessions: rec.Sessions, BulkCapFractions: rec.BulkCapFractions,
	}
	if len(rec.Profiles) == 0 || len(rec.Losses) == 0 || len(rec.CCs) == 0 || len(rec.Arms) == 0 {
		return nil, errors.New("it names no profiles, losses, ccs or arms")
	}
	for _, a := range rec.Axes {
		m.Axes = append(m.Axes, NewAxis(a.Name, a.Values, nil))
	}
	if errs := m.validateAxes(); len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	for _, t := range rec.Profiles {
		p, err := shapedlink.ParseProfile(t)
		if err != nil {
			return nil, fmt.Errorf("profile %q: %w", t, err)
		}
		m.Profiles = append(m.Profiles, p)
	}
	if m.Repeats < 1 || m.Repeats > maxRepeats {
		return nil, fmt.Errorf("repeats %d is outside 1..%d", m.Repeats, maxRepeats)
	}
	if n := m.size(); n > maxRuns {
		return nil, fmt.Errorf("it plans more than %d runs", maxRuns)
	}
	// A two-host matrix plans one pseudo-profile, the path; the address
	// is enough to plan it.
	m.Remote = rec.Remote
	if rec.Shard != "" {
		s, err := ParseShard(rec.Shard)
		if err != nil {
			return nil, err
		}
		m.Shard = s
	}
	return m, nil
}

// Merged is the runs of several work directories, each one shard of
// one matrix, read by LoadShards.
type Merged struct {
	// Dirs are the work directories, as given.
	Dirs []string
	// Runs are every run they hold (results.Scan), sorted as
	// results.Load sorts; Ignored the run.json files found but not
	// counted, with why.
	Runs    []results.Run
	Ignored []results.Ignored
	// Shards is the shard count every directory records (1 when one
	// whole, unsharded directory was given).
	Shards int
	// Planned is how many runs the whole matrix has; ShardPlanned how many
	// of them each shard's share holds, by index.
	Planned      int
	ShardPlanned []int
	// Missing are the planned runs no directory holds a record of, as
	// cell/arm/rN, in plan order; Failed counts records of failed runs
	// (the shard's command redoes them when run again).
	Missing []string
	Failed  int
	// AbsentShards are the shards of the count that were not given.
	AbsentShards []Shard
}

// complete reports whether every planned run has a record and none failed.
func (m *Merged) complete() bool { return len(m.Missing) == 0 && m.Failed == 0 }

// Note says, in one paragraph, what the merge lacks: "" when it is
// complete. A merge that lacks runs is not an error (a shard may still be
// running), but its summary covers only what is there.
func (m *Merged) Note() string {
	if m.complete() {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the merge holds %d of the matrix's %d runs", m.Planned-len(m.Missing), m.Planned)
	if n := len(m.Missing); n > 0 {
		shown := m.Missing[:min(n, 5)]
		more := ""
		if n > len(shown) {
			more = fmt.Sprintf(" and %d more", n-len(shown))
		}
		fmt.Fprintf(&b, "; %d missing: %s%s", n, strings.Join(shown, ", "), more)
	}
	if len(m.AbsentShards) > 0 {
		var names []string
		for _, s := range m.AbsentShards {
			names = append(names, s.String())
		}
		fmt.Fprintf(&b, "; shards not given: %s", strings.Join(names, ", "))
	}
	if m.Failed > 0 {
		fmt.Fprintf(&b, "; %d runs failed", m.Failed)
	}
	b.WriteString(". The summary covers only the runs present; run the missing shards' commands again (they resume) and merge again")
	return b.String()
}

// runKey names one run of a matrix: cell directory, arm and repeat.
func runKey(cell results.Cell, arm string, repeat int) string {
	return fmt.Sprintf("%s/%s/r%d", cell.Dir(), arm, repeat)
}

// shardDir is one work directory of a merge, with its matrix.json.
type shardDir struct {
	dir string
	rec matrixRecord
	m   *Matrix
}

// LoadShards reads the work directories of several shards of one matrix
// and merges their runs. Each directory must hold matrix.json. It refuses
// directories made for different matrices (anything but the work
// directory, the shard and a two-host matrix's daemon address differs),
// two directories of one shard, differing shard counts, a run held by two
// directories (naming both files), a run outside its directory's share,
// and a run whose duration is not its matrix's. A run.json that is not
// where its record says it belongs (a copy) is not counted but listed in
// Ignored (results.Scan). Runs that no directory holds yet are not an
// error: Merged lists them.
func LoadShards(dirs []string) (*Merged, error) {
	if len(dirs) == 0 {
		return nil, errors.New("no work directories to merge")
	}
	sds, err := readShardDirs(dirs)
	if err != nil {
		return nil, err
	}
	byShard, err := sameMatrix(sds)
	if err != nil {
		return nil, err
	}
	first := sds[0]
	merged := &Merged{Dirs: dirs, Shards: max(1, first.m.Shard.Count)}
	full := first.m.fullPlan()
	merged.Planned = len(full)
	held, err := mergeRuns(sds, merged)
	if err != nil {
		return nil, err
	}
	if len(merged.Runs) == 0 {
		return nil, fmt.Errorf("results: no %s under %s", results.RunFile, strings.Join(dirs, ", "))
	}
	for _, rc := range full {
		if k := runKey(rc.Cell, string(rc.Arm), rc.Repeat); held[k] == "" {
			merged.Missing = append(merged.Missing, k)
		}
	}
	for i := range merged.Shards {
		merged.ShardPlanned = append(merged.ShardPlanned, len(Shard{i, merged.Shards}.share(full)))
		if _, ok := byShard[i]; !ok {
			merged.AbsentShards = append(merged.AbsentShards, Shard{Index: i, Count: merged.Shards})
		}
	}
	slices.SortStableFunc(merged.Runs, compareRuns)
	return merged, nil
}

// readShardDirs checks that each directory is given once and is a
// directory, and reads its matrix.json.
func readShardDirs(dirs []string) ([]shardDir, error) {
	seenDir := map[string]string{}
	for _, d := range dirs {
		abs, err := filepath.Abs(d)
		if err != nil {
			return nil, err
		}
		if prev, ok := seenDir[abs]; ok {
			return nil, fmt.Errorf("%s is given twice (as %s and %s): give each shard's work directory once", abs, prev, d)
		}
		seenDir[abs] = d
		if st, err := os.Stat(d); err != nil {
			return nil, fmt.Errorf("work directory %s: %w", d, err)
		} else if !st.IsDir() {
			return nil, fmt.Errorf("%s is not a directory: give the work directories the shards wrote to", d)
		}
	}
	var sds []shardDir
	for _, d := range dirs {
		rec, m, err := readMatrixFile(d)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("%s has no %s, so it cannot be checked against the other directories: merge only work directories written by a matrix command (or summarise it on its own)", d, matrixFile)
			}
			return nil, err
		}
		sds = append(sds, shardDir{dir: d, rec: rec, m: m})
	}
	return sds, nil
}

// readMatrixFile reads dir's matrix.json and the matrix it describes; a
// missing file gives an error matching os.ErrNotExist.
func readMatrixFile(dir string) (matrixRecord, *Matrix, error) {
	var rec matrixRecord
	mf := filepath.Join(dir, matrixFile)
	if err := results.ReadJSON(mf, &rec); err != nil {
		return rec, nil, err
	}
	m, err := matrixFromRecord(rec)
	if err != nil {
		return rec, nil, fmt.Errorf("%s: %w", mf, err)
	}
	return rec, m, nil
}

// sameMatrix checks that the directories hold shards of one matrix, of
// one count, each shard once, and returns the directory of each shard
// index.
func sameMatrix(sds []shardDir) (map[int]string, error) {
	first := sds[0]
	for _, sd := range sds[1:] {
		a, b := first.rec, sd.rec
		a.Shard, b.Shard = "", ""
		// The shards of a two-host matrix may each run against a daemon
		// of their own: the address says which machines, not what was
		// measured, so only whether each is two-host is compared.
		a.Remote, b.Remote = twoHost(a.Remote), twoHost(b.Remote)
		if diffs := diffRecords(a, b); len(diffs) > 0 {
			for i := range diffs {
				diffs[i] = strings.Replace(diffs[i], " there, ", " in "+first.dir+", ", 1)
				diffs[i] = strings.TrimSuffix(diffs[i], " asked") + " in " + sd.dir
			}
			return nil, fmt.Errorf("%s and %s hold different matrices (%s): merge only the shards of one matrix",
				first.dir, sd.dir, strings.Join(diffs, "; "))
		}
		if fc, sc := max(1, first.m.Shard.Count), max(1, sd.m.Shard.Count); fc != sc {
			return nil, fmt.Errorf("%s is shard %s and %s is shard %s: the shard counts differ, so their shares overlap; merge the shards of one count",
				first.dir, first.m.Shard, sd.dir, sd.m.Shard)
		}
	}
	byShard := map[int]string{}
	for _, sd := range sds {
		if prev, ok := byShard[sd.m.Shard.Index]; ok {
			if sd.m.Shard.Whole() {
				return nil, fmt.Errorf("%s and %s each hold the whole matrix (neither is a shard): summarise each on its own, or run the matrix as shards with -shard i/n", prev, sd.dir)
			}
			return nil, fmt.Errorf("%s and %s are both shard %s: give each shard's work directory once", prev, sd.dir, sd.m.Shard)
		}
		byShard[sd.m.Shard.Index] = sd.dir
	}
	return byShard, nil
}

// mergeRuns reads every directory's runs into merged, refusing a run held
// by two directories, and then each run against its directory's share
// and its matrix's duration. It returns the file that holds each run, by
// runKey.
func mergeRuns(sds []shardDir, merged *Merged) (map[string]string, error) {
	held := map[string]string{}
	loaded := make([][]results.Run, len(sds))
	for i, sd := range sds {
		l, err := results.Scan(sd.dir)
		if err != nil {
			return nil, err
		}
		merged.Ignored = append(merged.Ignored, l.Ignored...)
		for _, r := range l.Runs {
			k := runKey(r.Cell, r.Arm, r.Repeat)
			// Scan counts a run only where it belongs, so this is the
			// file it was read from.
			path := filepath.Join(results.RunDir(sd.dir, r.Cell, r.Arm, r.Repeat), results.RunFile)
			if prev, ok := held[k]; ok {
				return nil, fmt.Errorf("run %s is in two directories, as %s and as %s: keep one (each run belongs to one shard)", k, prev, path)
			}
			held[k] = path
		}
		loaded[i] = l.Runs
	}
	for i, sd := range sds {
		share := map[string]bool{}
		for _, rc := range sd.m.Plan() {
			share[runKey(rc.Cell, string(rc.Arm), rc.Repeat)] = true
		}
		for _, r := range loaded[i] {
			k := runKey(r.Cell, r.Arm, r.Repeat)
			if !share[k] {
				return nil, fmt.Errorf("%s is not in shard %s's share of the matrix: move it out of %s", held[k], sd.m.Shard, sd.dir)
			}
			if err := durationMatches(r, sd.rec, held[k], sd.dir); err != nil {
				return nil, err
			}
			if r.Failed != "" {
				merged.Failed++
			}
			merged.Runs = append(merged.Runs, r)
		}
	}
	return held, nil
}

// durationMatches refuses a run (read from path) whose duration is not
// the one the matrix.json of dir records: a record of another matrix.
func durationMatches(r results.Run, rec matrixRecord, path, dir string) error {
	// A record without a duration (written by hand) cannot be checked.
	if want := rec.Workload.Duration; want != 0 && r.Duration != want {
		return fmt.Errorf("%s records a run of %v, but the matrix in %s (%s) runs %v: it is another matrix's run; move it out of %s",
			path, r.Duration, dir, matrixFile, want, dir)
	}
	return nil
}

// LoadWorkdir reads one work directory for a summary, as results.Scan
// does, and, when the directory has matrix.json, checks each run's
// duration against the matrix's. A directory without matrix.json (written
// by hand, or by an older version) is read as it is. A directory with no
// run to count is an error.
func LoadWorkdir(dir string) (results.Loaded, error) {
	l, err := results.Scan(dir)
	if err != nil {
		return results.Loaded{}, err
	}
	if err := l.NoRuns(dir); err != nil {
		return results.Loaded{}, err
	}
	// Only the record: the duration needs no plan, and a matrix this
	// version would no longer build still has its runs to summarise.
	var rec matrixRecord
	err = results.ReadJSON(filepath.Join(dir, matrixFile), &rec)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return l, nil
	case err != nil:
		return results.Loaded{}, fmt.Errorf("%w (move it aside to summarise the runs without checking them against it)", err)
	}
	for _, r := range l.Runs {
		path := filepath.Join(results.RunDir(dir, r.Cell, r.Arm, r.Repeat), results.RunFile)
		if err := durationMatches(r, rec, path, dir); err != nil {
			return results.Loaded{}, err
		}
	}
	return l, nil
}

// twoHost is what the merge compares of a record's daemon address.
func twoHost(addr string) string {
	if addr == "" {
		return ""
	}
	return "two-host"
}

// compareRuns orders runs as results.Load does: by cell, arm and repeat.
func compareRuns(a, b results.Run) int {
	switch {
	case results.Less(a.Cell, b.Cell):
		return -1
	case results.Less(b.Cell, a.Cell):
		return 1
	case a.Cell.Dir() != b.Cell.Dir():
		return strings.Compare(a.Cell.Dir(), b.Cell.Dir())
	case a.Arm != b.Arm:
		return strings.Compare(a.Arm, b.Arm)
	}
	return a.Repeat - b.Repeat
}
