package summary

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/spicelive"
	"github.com/shakenfist/quicbench/measure/spicelive/keydraw"
	"github.com/shakenfist/quicbench/stats"
)

// pixelRun is a live run's key-to-pixel figure.
type pixelRun struct {
	cell   results.Cell
	arm    measure.Arm
	repeat int
	p      *keydraw.PixelAnalysis
}

// pixelRuns reads the key-to-pixel figures of the live runs that have
// one, cell by cell in order, then arm by arm and repeat by repeat.
func pixelRuns(c spicelive.Config, all map[string]map[string]map[measure.Arm]*series, cells []results.Cell) []pixelRun {
	var out []pixelRun
	for _, cell := range cells {
		for _, arm := range c.Arms {
			s := all[cell.Dir()][spicelive.ReadingLive][arm]
			if s == nil {
				continue
			}
			for _, run := range s.runs {
				if run.Failed != "" || run.Err != nil || run.Rec.Pixel == nil {
					continue
				}
				out = append(out, pixelRun{cell: cell, arm: arm, repeat: run.Repeat, p: run.Rec.Pixel})
			}
		}
	}
	return out
}

// pixelTable writes each live run's key-to-pixel figure beside its
// key-to-draw, when any run has one.
func pixelTable(w io.Writer, c spicelive.Config, all map[string]map[string]map[measure.Arm]*series, cells []results.Cell) {
	runs := pixelRuns(c, all, cells)
	if len(runs) == 0 {
		return
	}
	fmt.Fprintf(w, "## Key-to-pixel at the client's screen\n\n")
	fmt.Fprintf(w, "Key-to-pixel is from a key typed into the client's X server to the first change of the typing xterm's pixels in spicy's window; "+
		"key-to-draw is from that key's press to its draw, both at the tunnel's client end. Over the keys after the warm-up that have both, "+
		"in milliseconds: their medians, and key-to-pixel minus key-to-draw (median, quartiles, range), which is the key's way from the X server "+
		"through spicy to the tunnel (input) plus the draw's way from the tunnel through spicy to the pixels (output). "+
		"Keys with no pixel change before the next key are counted, as is each key not timed because the key before it had none; "+
		"early counts keys whose pixels changed more than %v before their draw passed the tunnel.", keydraw.PixelTolerance)
	if slices.ContainsFunc(runs, func(r pixelRun) bool { return r.p.Method == keydraw.MethodGlyph }) {
		fmt.Fprint(w, " With a display workload keys are told apart by their glyphs: a key's pixel change is the first, within the key timeout, "+
			"that covers the middle of its glyph's cell, and its key-to-draw the draw of that glyph; keys with no such change are counted, "+
			"and not timed counts Returns and, in runs that stopped with their typing, the keys typed in its last key timeout.")
	}
	fmt.Fprint(w, "\n\n")
	fmt.Fprintln(w, "| cell | arm | repeat | keys | timed | no pixel change | not timed | key-to-draw p50 | key-to-pixel p50 | pixel - draw p50 | p25-p75 | min-max | input p50 | output p50 | early |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range runs {
		p := r.p
		var draws []time.Duration
		for _, k := range p.Keys {
			if k.At >= c.Warmup && k.Pixel >= 0 && k.Draw >= 0 {
				draws = append(draws, k.Draw)
			}
		}
		d, _ := stats.P50(draws)
		fmt.Fprintf(w, "| %s, %s%% loss | %s | %d | %d | %d | %d | %d | %s | %s | %s | %s-%s | %s-%s | %s | %s | %d |\n",
			r.cell.Title(), num(r.cell.LossPct), r.arm, r.repeat, p.Typed, p.Diff.N, p.Unanswered, p.AfterUnanswered+p.Untimed+p.Tail,
			fms(d), fms(p.Pixel.P50), fms(p.Diff.P50), fms(p.Diff.P25), fms(p.Diff.P75), fms(p.Diff.Min), fms(p.Diff.Max),
			fms(p.Input.P50), fms(p.Output.P50), p.Early)
	}
	fmt.Fprintln(w)
}

// pixelControlChecks are the control's checks of key-to-pixel, for the
// runs that have it: no key's pixels change sooner after it is typed than
// the round trip, and none before its draw passed the tunnel.
func pixelControlChecks(c spicelive.Config, all map[string]map[string]map[measure.Arm]*series, cells []results.Cell) []controlCheck {
	type link struct {
		min   time.Duration
		early int
		keys  int
	}
	byCell := map[string]*link{}
	var order []results.Cell
	for _, r := range pixelRuns(c, all, cells) {
		l := byCell[r.cell.Dir()]
		if l == nil {
			l = &link{min: -1}
			byCell[r.cell.Dir()] = l
			order = append(order, r.cell)
		}
		l.early += r.p.Early
		l.keys += r.p.Diff.N
		if r.p.Pixel.N > 0 && (l.min < 0 || r.p.Pixel.Min < l.min) {
			l.min = r.p.Pixel.Min
		}
	}
	var out []controlCheck
	for _, cell := range order {
		l := byCell[cell.Dir()]
		rtt := time.Duration(cell.RTTms * float64(time.Millisecond))
		out = append(out,
			controlCheck{What: fmt.Sprintf("%s: no key's pixels changed sooner after it was typed than the %v round trip", cell.Profile, rtt),
				Pass: l.keys > 0 && l.min >= rtt-time.Millisecond,
				Why:  fmt.Sprintf("shortest key-to-pixel %s ms over %d keys", fms(l.min), l.keys)},
			controlCheck{What: fmt.Sprintf("%s: no key's pixels changed before its draw passed the tunnel", cell.Profile),
				Pass: l.keys > 0 && l.early == 0,
				Why:  fmt.Sprintf("%d of %d keys early by more than %v", l.early, l.keys, keydraw.PixelTolerance)})
	}
	return out
}
