package benchcmd

import (
	"fmt"
	"io"
	"math"

	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/stats"
)

// Reading is one cell's verdict as a fuller matrix found it: arm B against
// arm A, with the delta of their p95s and the threshold it was read
// against, and where the reading is written up.
type Reading struct {
	Cell                 string // results.Cell.Dir(), e.g. "80ms-10mbit_loss1_reno"
	A, B                 string // arms, e.g. "tcp", "quic"
	Verdict              stats.Verdict
	DeltaMs, ThresholdMs float64
	Source               string // e.g. "docs/headline.md"
}

// finding sets what a run found in a cell beside a Reading of it.
type finding struct {
	Reading Reading
	// Found is the run's own comparison; nil when the run has no such
	// cell or arms (Err says why).
	Found *report.Comparison
	Label string
	Err   string
}

// Same reports whether the run reads the cell as the fuller matrix did.
func (f finding) Same() bool { return f.Found != nil && f.Found.Verdict == f.Reading.Verdict }

// String is the one line printFindings prints.
func (f finding) String() string {
	r := f.Reading
	full := fmt.Sprintf("%s %+.1f ms, threshold %.1f ms (%s)", reading(r.Verdict, report.ArmLabel(r.B)), r.DeltaMs, r.ThresholdMs, r.Source)
	if f.Found == nil {
		return fmt.Sprintf("%s: not measured here (%s); the full matrix reads %s", r.Cell, f.Err, full)
	}
	same := "the same reading"
	if !f.Same() {
		same = "a different reading: rerun, or run the full matrix, before relying on either"
	}
	return fmt.Sprintf("%s: %s %+.1f ms, threshold %.1f ms; the full matrix reads %s: %s",
		f.Label, reading(f.Found.Verdict, report.ArmLabel(r.B)), f.Found.DeltaMs, f.Found.ThresholdMs, full, same)
}

func reading(v stats.Verdict, arm string) string {
	if v == stats.Unresolved {
		return "unresolved,"
	}
	return fmt.Sprintf("%s %s by", arm, v)
}

// findings compares the runs' cells with the readings.
func findings(runs []results.Run, readings []Reading) ([]finding, error) {
	rep, err := report.Build(runs, report.Options{})
	if err != nil {
		return nil, err
	}
	var out []finding
	for _, r := range readings {
		f := finding{Reading: r, Err: "no such cell"}
		for _, c := range rep.Cells {
			if c.Dir != r.Cell {
				continue
			}
			f.Label, f.Err = c.Label(), "no comparison of "+r.B+" against "+r.A
			for i, cmp := range c.Comparisons {
				if cmp.A == r.A && cmp.B == r.B && cmp.Error == "" && !math.IsNaN(cmp.DeltaMs) {
					f.Found, f.Err = &c.Comparisons[i], ""
				}
			}
		}
		out = append(out, f)
	}
	return out, nil
}

// printFindings prints one line per reading: what the runs in workdir found
// in that cell and whether it is the fuller matrix's reading.
func printFindings(w io.Writer, name, workdir string, readings []Reading) {
	runs, err := results.Load(workdir)
	if err == nil {
		var fs []finding
		if fs, err = findings(runs, readings); err == nil {
			for _, f := range fs {
				fmt.Fprintf(w, "%s -quick: %s\n", name, f)
			}
			return
		}
	}
	fmt.Fprintf(w, "%s -quick: no finding to compare: %v\n", name, err)
}
