package results

import (
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"
)

// Extra is a run Scan counted, with the record its experiment keeps
// beside its run.json decoded into E.
type Extra[E any] struct {
	Run
	// Dir is the run's directory (RunDir).
	Dir string
	// Rec is the experiment's record; Err says why it could not be read
	// (matching fs.ErrNotExist when the run has none), Rec then being
	// E's zero value.
	Rec E
	Err error
}

// scanExtra is Scan of workdir with, for each run it counts, the file
// name in the run's directory read into E (ReadExtra). A record that is
// missing or does not read is not an error here but the run's Err: the
// run itself was counted, and each summary says what it makes of a run
// without its record.
func scanExtra[E any](workdir, name string) ([]Extra[E], []Ignored, error) {
	l, err := Scan(workdir)
	if err != nil {
		return nil, nil, err
	}
	out := make([]Extra[E], len(l.Runs))
	for i, r := range l.Runs {
		dir := RunDir(workdir, r.Cell, r.Arm, r.Repeat)
		rec, err := ReadExtra[E](dir, name)
		out[i] = Extra[E]{Run: r, Dir: dir, Rec: rec, Err: err}
	}
	return out, l.Ignored, nil
}

// LoadExtra is scanExtra for a caller with no use for the list of what
// it ignored; a work directory with no run is an error, as for Load.
func LoadExtra[E any](workdir, name string) ([]Extra[E], error) {
	out, ignored, err := scanExtra[E](workdir, name)
	if err == nil && len(out) == 0 {
		err = Loaded{Ignored: ignored}.NoRuns(workdir)
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ReadExtra reads the record name that an experiment keeps in the run
// directory dir (as pathchange.json) into a new E, through ReadJSON.
func ReadExtra[E any](dir, name string) (E, error) {
	var e, zero E
	if err := checkRecordName(name); err != nil {
		return zero, err
	}
	if err := ReadJSON(filepath.Join(dir, name), &e); err != nil {
		return zero, err
	}
	return e, nil
}

// checkRecordName says why name cannot be a record's file name in a run
// directory.
func checkRecordName(name string) error {
	if name == "" || name == RunFile || strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return fmt.Errorf("results: %q cannot name an experiment's record beside %s", name, RunFile)
	}
	return nil
}

// ReadPlaced reads the records an experiment keeps in a layout of its
// own under workdir: every file whose path from workdir (with slashes)
// matches pattern (path.Match, such as "*/*.json") is read into a T. The
// record counts only at the place it names: place gives that path, and a
// record found elsewhere (a copy) is listed in Ignored with the reason.
// An error from place (a record of another schema) is the error, with
// the file's name. Records come back in the order of their paths.
func ReadPlaced[T any](workdir, pattern string, place func(T) (string, error)) ([]T, []Ignored, error) {
	if _, err := path.Match(pattern, ""); err != nil {
		return nil, nil, fmt.Errorf("results: pattern %q: %w", pattern, err)
	}
	depth := strings.Count(pattern, "/")
	var out []T
	var ignored []Ignored
	err := filepath.WalkDir(workdir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(workdir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && strings.Count(rel, "/") >= depth {
				return fs.SkipDir
			}
			return nil
		}
		if ok, _ := path.Match(pattern, rel); !ok {
			return nil
		}
		var rec T
		if err := ReadJSON(p, &rec); err != nil {
			return err
		}
		want, err := place(rec)
		if err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		if want != rel {
			ignored = append(ignored, Ignored{p, "it records " + want + ", not the record whose place it is in (a copy?)"})
			return nil
		}
		out = append(out, rec)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return out, ignored, nil
}
