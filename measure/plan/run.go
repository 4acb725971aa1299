package plan

import (
	"log/slog"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
)

// Run is one planned run: one cell, one arm, one repeat, with everything
// the matrix's axes set on it.
type Run struct {
	Cell     results.Cell
	Profile  shapedlink.Profile // loss included
	Arm      measure.Arm
	Repeat   int
	Workload spicelike.Config
	Workdir  string
	Link     shapedlink.Options
	// Controller describes quicreno and its settings when the matrix
	// needs it (Matrix.Quicreno); recorded as results.Run.TCPController
	// in the runs whose tcp arm runs it.
	Controller string
	// Qlog writes a qlog file per QUIC connection into the run directory.
	Qlog bool
	// Sessions is how many sessions run at once over the link, each with
	// its own channels; 0 or 1 is one. With Sessions set (1 included) the
	// run records results.Run.Sessions.
	Sessions int
	// Logger receives the run's warnings; nil is slog.Default.
	Logger *slog.Logger
}

// Dir is the run's results directory.
func (r Run) Dir() string {
	return results.RunDir(r.Workdir, r.Cell, string(r.Arm), r.Repeat)
}
