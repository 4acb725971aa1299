package results

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// ReadJSON reads path into v.
func ReadJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("results: %s is not valid JSON: %w", path, err)
	}
	return nil
}

// Load reads every run.json under workdir, sorted by cell, arm and repeat.
func Load(workdir string) ([]Run, error) {
	var runs []Run
	err := filepath.WalkDir(workdir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && setAside.MatchString(d.Name()) {
			return fs.SkipDir
		}
		if d.IsDir() || d.Name() != RunFile {
			return nil
		}
		var r Run
		if err := ReadJSON(p, &r); err != nil {
			return err
		}
		if err := r.Validate(); err != nil {
			return fmt.Errorf("results: %s: %w (rerun the matrix command to redo it, or move it out of %s)", p, err, workdir)
		}
		runs = append(runs, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("results: no %s under %s; is it a results directory?", RunFile, workdir)
	}
	sort.Slice(runs, func(i, j int) bool {
		a, b := runs[i], runs[j]
		if a.Cell.Dir() != b.Cell.Dir() {
			return Less(a.Cell, b.Cell)
		}
		if a.Arm != b.Arm {
			return a.Arm < b.Arm
		}
		return a.Repeat < b.Repeat
	})
	return runs, nil
}

// Less orders cells by profile (RTT, then rate, then the profile's
// options, none first), then CC (reno first), then loss, then sessions and
// bulk cap.
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
	return a.BulkCapFraction < b.BulkCapFraction
}
