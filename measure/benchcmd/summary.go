package benchcmd

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/shakenfist/quicbench/measure/plan"
	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/report/render"
	"github.com/shakenfist/quicbench/measure/results"
)

// summarise prints the markdown summary of workdir and writes its plots
// into workdir/plots and, for runs with cross flows, workdir/neighbours.csv.
// The run.json files it did not count (LoadWorkdir) are named on stderr.
func summarise(w io.Writer, workdir string) int {
	l, err := plan.LoadWorkdir(workdir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return exitFailed
	}
	if note := results.IgnoredNote(l.Ignored); note != "" {
		fmt.Fprintln(os.Stderr, note)
	}
	runs := l.Runs
	opts := report.Options{Source: workdir}
	if err := render.Markdown(w, runs, opts); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return exitFailed
	}
	if rep, err := report.Build(runs, opts); err != nil {
		fmt.Fprintln(os.Stderr, "neighbours:", err)
	} else if path, err := render.WriteNeighbours(workdir, rep); err != nil {
		fmt.Fprintln(os.Stderr, "neighbours:", err)
	} else if path != "" {
		fmt.Fprintf(os.Stderr, "the neighbours' figures per run in %s\n", path)
	}
	if files, err := render.Plots(filepath.Join(workdir, "plots"), runs, opts); err != nil {
		fmt.Fprintln(os.Stderr, "plots:", err)
	} else {
		fmt.Fprintf(os.Stderr, "%d plot files in %s\n", len(files), filepath.Join(workdir, "plots"))
	}
	return exitOK
}
