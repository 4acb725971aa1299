package summary

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/neighbours"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/spicelive"
)

// neighbourHeader are runs.csv's columns on the cross flows beside the
// run (package neighbours), after every other and only in a file of runs
// that had cross flows: their goodput in the display's direction and
// retransmission rate, the session's retransmission rate, Jain's index,
// and why a run's were not measured.
var neighbourHeader = []string{"cross_mbit", "cross_retransmit_pct", "session_retransmit_pct", "cross_jain", "cross_unmeasured"}

// hasCross says whether some run had cross flows.
func hasCross(runs []liveRun) bool {
	for _, r := range runs {
		if len(r.Link.Cross) > 0 {
			return true
		}
	}
	return false
}

// neighbourCells are a run's neighbourHeader columns, empty for a run
// without cross flows or one that failed.
func neighbourCells(r liveRun) []string {
	out := make([]string, len(neighbourHeader))
	if len(r.Link.Cross) == 0 || r.Failed != "" {
		return out
	}
	f, err := neighbours.Measure(forNeighbours(r))
	switch {
	case err != nil:
		out[4] = err.Error()
	case f.Unmeasured != "":
		out[4] = f.Unmeasured
	default:
		num := func(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }
		out[0], out[1], out[3] = num(f.CrossMbit), num(f.CrossRetransmitPct), num(f.Jain)
	}
	if err == nil && f.SessionRetransmitPct >= 0 {
		out[2] = strconv.FormatFloat(f.SessionRetransmitPct, 'f', 4, 64)
	}
	return out
}

// forNeighbours is live run lr as package neighbours reads it. A live
// run's samples count from the typing's start in the client trace's
// time, so its window is taken from the trace's start and the typing
// period in live.json, and its server's transport state from live.json;
// without those it is the run as recorded.
func forNeighbours(lr liveRun) results.Run {
	r, rec := lr.Run, lr.Rec
	if len(r.Link.Cross) == 0 || r.Failed != "" || !r.SamplesStart.IsZero() || lr.Err != nil || rec.Client == nil {
		return r
	}
	tr, err := spicelive.ReadTrace(filepath.Join(lr.Dir, spicelive.ClientTrace))
	if err != nil || tr.Header.Started.IsZero() {
		return r
	}
	r.SamplesStart = tr.Header.Started.Add(rec.Client.TypingStart)
	r.Duration = rec.Client.TypingEnd - rec.Client.TypingStart
	if len(r.Server) == 0 && rec.Server != nil && rec.Server.State != nil {
		if b, err := json.Marshal(rec.Server.State); err == nil {
			r.Server = b
		}
	}
	return r
}

// neighboursSection writes, per reading whose runs had cross flows, what
// the session cost them (neighbours.Table).
func neighboursSection(w io.Writer, c spicelive.Config, all map[string]map[string]map[measure.Arm]*series) error {
	for _, rd := range c.Readings {
		var runs []results.Run
		for _, byReading := range all {
			for _, s := range byReading[rd] {
				for _, r := range s.runs {
					runs = append(runs, forNeighbours(r))
				}
			}
		}
		t, err := neighbours.Build(runs)
		if err != nil {
			return fmt.Errorf("%s reading: %w", rd, err)
		}
		if t == nil {
			continue
		}
		fmt.Fprintf(w, "## Neighbours, %s reading\n\n", rd)
		if err := t.WriteMarkdown(w); err != nil {
			return err
		}
		fmt.Fprintln(w)
	}
	return nil
}

// crossMbit is the goodput of live run lr's cross flows in the display's
// direction over its measured window, 0 for a run without them or whose
// flows could not be measured.
func crossMbit(lr liveRun) float64 {
	if len(lr.Link.Cross) == 0 {
		return 0
	}
	f, err := neighbours.Measure(forNeighbours(lr))
	if err != nil || f.Unmeasured != "" {
		return 0
	}
	return f.CrossMbit
}
