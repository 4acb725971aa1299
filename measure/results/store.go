package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
)

// State is what a run directory holds.
type State int

const (
	// missing: no record. The run was never made, or was interrupted.
	missing State = iota
	// Measured: a record that parses, validates and was measured.
	Measured
	// FailedRun: a valid record of a run that failed (Run.Failed set). It
	// is kept for the report and redone on resume.
	FailedRun
	// Corrupt: a record that does not parse or does not validate.
	Corrupt
)

func (s State) String() string {
	switch s {
	case missing:
		return "missing"
	case Measured:
		return "measured"
	case FailedRun:
		return "failed"
	case Corrupt:
		return "corrupt"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Check reads the record in the run directory dir and says what it holds.
// The record must be the run that belongs there: cell, arm and repeat are
// compared with the record's own. For Corrupt, the error says why.
func Check(dir string, c Cell, arm string, repeat int) (Run, State, error) {
	var r Run
	err := ReadJSON(filepath.Join(dir, RunFile), &r)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return r, missing, nil
	case err != nil:
		return r, Corrupt, err
	}
	if err := r.Validate(); err != nil {
		return r, Corrupt, fmt.Errorf("results: %s: %w", filepath.Join(dir, RunFile), err)
	}
	if r.Cell != c || r.Arm != arm || r.Repeat != repeat {
		return r, Corrupt, fmt.Errorf("results: %s records %s %s r%d, not %s %s r%d",
			filepath.Join(dir, RunFile), r.Cell.Dir(), r.Arm, r.Repeat, c.Dir(), arm, repeat)
	}
	if r.Failed != "" {
		return r, FailedRun, nil
	}
	return r, Measured, nil
}

// SetAside renames the run directory dir to dir.<why>-<n> (the first n not
// taken), so a redo starts afresh and what was there is kept for a reader.
// Load does not read set-aside directories. It returns the new name.
func SetAside(dir, why string) (string, error) {
	for n := 1; n < 1000; n++ {
		to := fmt.Sprintf("%s.%s-%d", dir, why, n)
		if _, err := os.Lstat(to); errors.Is(err, fs.ErrNotExist) {
			return to, os.Rename(dir, to)
		}
	}
	return "", fmt.Errorf("results: %s has been set aside 999 times; clear out its %s.%s-* directories", dir, dir, why)
}

// setAside matches the names SetAside gives.
var setAside = regexp.MustCompile(`\.(failed|corrupt)-[0-9]+$`)

// WriteJSON writes v as indented JSON to path atomically: a temporary file
// in the same directory, synced, then renamed over path.
func WriteJSON(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("results: encoding %s: %w", path, err)
	}
	f, tmp, err := createTemp(path)
	if err != nil {
		return err
	}
	defer os.Remove(tmp) // no-op after a successful rename
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// createTemp creates a new file beside path for WriteJSON, readable by all
// (0644) unless the umask says otherwise: results are meant to be shared.
// os.CreateTemp would make it 0600.
func createTemp(path string) (*os.File, string, error) {
	for range 100 {
		tmp := fmt.Sprintf("%s/.%s.tmp-%d-%d", filepath.Dir(path), filepath.Base(path), os.Getpid(), rand.Uint64())
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, tmp, err
	}
	return nil, "", fmt.Errorf("results: could not create a temporary file beside %s", path)
}
