package results

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// ReadJSON reads path into v. The file must be a regular file of at most
// maxRecordBytes (ReadFile); a missing file gives an error that matches
// fs.ErrNotExist.
func ReadJSON(path string, v any) error {
	b, err := ReadFile(path, maxRecordBytes)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("results: %s is not valid JSON: %w", path, err)
	}
	return nil
}

// Ignored is a run.json that Scan found but did not count, and why.
type Ignored struct {
	Path string `json:"path"`
	Why  string `json:"why"`
}

func (i Ignored) String() string { return i.Path + ": " + i.Why }

// Loaded is what Scan found under a work directory: the runs it counts,
// sorted by cell, arm and repeat, and the run.json files it passed over.
type Loaded struct {
	Runs    []Run
	Ignored []Ignored
}

// repeatDir matches the name of a run's directory, r<N>.
var repeatDir = regexp.MustCompile(`^r[0-9]+$`)

// Scan reads the runs of workdir. A run counts only where the matrix
// wrote it, at <cell>/<arm>/r<N>/run.json (RunDir), and only when its
// record names that cell, arm and repeat: a run directory copied aside
// ("r1.bak"), or a record copied into another run's directory, would
// otherwise be counted twice. Such files are listed in Ignored with the
// reason, and so is any other run.json under workdir; directories set
// aside by SetAside are passed over without a word. A record where a run
// belongs that does not read or validate is an error. A work directory
// with no run to count is not (a shard may not have finished one yet):
// Loaded.NoRuns says so where it matters.
func Scan(workdir string) (Loaded, error) {
	var out Loaded
	err := filepath.WalkDir(workdir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != workdir && setAside.MatchString(d.Name()) {
			return fs.SkipDir
		}
		if d.IsDir() || d.Name() != RunFile {
			return nil
		}
		rel, err := filepath.Rel(workdir, p)
		if err != nil {
			return err
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		switch {
		case len(parts) != 4:
			out.Ignored = append(out.Ignored, Ignored{p, "not where a run's record goes (<cell>/<arm>/r<N>/" + RunFile + ")"})
			return nil
		case !repeatDir.MatchString(parts[2]):
			out.Ignored = append(out.Ignored, Ignored{p, fmt.Sprintf("%q is not a run's directory (r<N>); a copy of one is not another repeat", parts[2])})
			return nil
		}
		var r Run
		if err := ReadJSON(p, &r); err != nil {
			return err
		}
		if err := r.Validate(); err != nil {
			return fmt.Errorf("results: %s: %w (rerun the matrix command to redo it, or move it out of %s)", p, err, workdir)
		}
		if want := path.Join(r.Cell.Dir(), r.Arm, fmt.Sprintf("r%d", r.Repeat)); want != path.Join(parts[:3]...) {
			out.Ignored = append(out.Ignored, Ignored{p, "it records " + want + ", not the run whose directory it is in (a copy?)"})
			return nil
		}
		out.Runs = append(out.Runs, r)
		return nil
	})
	if err != nil {
		return Loaded{}, err
	}
	sort.Slice(out.Runs, func(i, j int) bool {
		a, b := out.Runs[i], out.Runs[j]
		if a.Cell.Dir() != b.Cell.Dir() {
			return Less(a.Cell, b.Cell)
		}
		if a.Arm != b.Arm {
			return a.Arm < b.Arm
		}
		return a.Repeat < b.Repeat
	})
	return out, nil
}

// NoRuns is nil when l holds a run, and otherwise the error saying that
// workdir, as Scan read it, holds none (and what was ignored).
func (l Loaded) NoRuns(workdir string) error {
	switch n := len(l.Ignored); {
	case len(l.Runs) > 0:
		return nil
	case n > 0:
		return fmt.Errorf("results: no run's record under %s; %d %s ignored (%s); a run's record is <cell>/<arm>/r<N>/%s",
			workdir, n, plural(n, "file was", "files were"), l.Ignored[0], RunFile)
	}
	return fmt.Errorf("results: no %s under %s; is it a results directory?", RunFile, workdir)
}

// Load is Scan's runs, for a caller with no use for the list of what it
// ignored; a work directory with no run is an error (Loaded.NoRuns).
func Load(workdir string) ([]Run, error) {
	l, err := Scan(workdir)
	if err == nil {
		err = l.NoRuns(workdir)
	}
	if err != nil {
		return nil, err
	}
	return l.Runs, nil
}

// IgnoredNote is one paragraph saying which run.json files were not
// counted and why, at most five by name; "" when none were.
func IgnoredNote(ignored []Ignored) string {
	if len(ignored) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ignored %d %s, not counted as runs:", len(ignored), plural(len(ignored), RunFile, RunFile+" files"))
	for i, ig := range ignored {
		if i == 5 {
			fmt.Fprintf(&b, " and %d more", len(ignored)-i)
			break
		}
		sep := ";"
		if i == 0 {
			sep = ""
		}
		fmt.Fprintf(&b, "%s %s", sep, ig)
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Less orders cells by profile (RTT, then rate, then the profile's
// options, none first), then CC (reno first), then loss, then sessions,
// bulk cap and the matrix's own axes (CompareAxes).
func Less(a, b Cell) bool {
	if a.RTTms != b.RTTms {
		return a.RTTms < b.RTTms
	}
	if a.RateMbit != b.RateMbit {
		return a.RateMbit > b.RateMbit
	}
	if oa, ob := ProfileOptions(a.Profile), ProfileOptions(b.Profile); oa != ob {
		return oa < ob
	}
	if a.CC != b.CC {
		if a.CC == "reno" || b.CC == "reno" {
			return a.CC == "reno"
		}
		return strings.Compare(a.CC, b.CC) < 0
	}
	if a.LossPct != b.LossPct {
		return a.LossPct < b.LossPct
	}
	if a.Sessions != b.Sessions {
		return a.Sessions < b.Sessions
	}
	if a.BulkCapFraction != b.BulkCapFraction {
		return a.BulkCapFraction < b.BulkCapFraction
	}
	return CompareAxes(a, b) < 0
}
