package summary

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/spicelive"
)

// The control asks two things of the live figure that a wrong instrument
// would get wrong:
//
//   - On a lossless, fast link, key-to-draw is the link's round trip plus
//     what the X server, spice-server and the client take, which the link
//     does not change. So when only the round trip changes, the median
//     key-to-draw must move by that change.
//   - No key can be answered faster than the round trip, so the shortest
//     key-to-draw must be at least the round trip. The busy xterm draws
//     all the time; counted, its draws would give intervals shorter than
//     the round trip, and for the check to mean anything they must have,
//     on at least one link: the shortest interval from a key to the next
//     draw of any area is reported beside it.

// controlCell is what the control reads from one link's live runs.
type controlCell struct {
	Profile string
	RTT     time.Duration
	// P50 is the median over repeats of each repeat's p50.
	P50 time.Duration
	// Min is the shortest key-to-draw of any repeat; MinAllDraws the
	// shortest interval from a key to the next draw of any area.
	Min, MinAllDraws time.Duration
	Repeats          int
}

// controlCheck is one check's outcome.
type controlCheck struct {
	What string
	Pass bool
	Why  string
}

// checkControl applies the control's checks to cells (any order).
func checkControl(cells []controlCell) []controlCheck {
	cs := slices.Clone(cells)
	slices.SortFunc(cs, func(a, b controlCell) int { return cmp.Compare(a.RTT, b.RTT) })
	var out []controlCheck
	busy := controlCheck{What: "counting the busy area's draws would have given less than the round trip, on at least one link"}
	for _, c := range cs {
		out = append(out,
			controlCheck{What: fmt.Sprintf("%s: no key answered faster than the %v round trip", c.Profile, c.RTT),
				Pass: c.Min >= c.RTT-time.Millisecond,
				Why:  fmt.Sprintf("shortest key-to-draw %s ms", fms(c.Min))})
		// On a short round trip a busy draw seldom falls between a key
		// and its answer (and spice-server, waiting for the client's
		// acknowledgements, sends its draws in bursts a round trip
		// apart), so one link where it did is what shows the filter at
		// work.
		busy.Pass = busy.Pass || c.MinAllDraws < c.RTT
		if busy.Why != "" {
			busy.Why += "; "
		}
		busy.Why += fmt.Sprintf("%s: shortest key to any draw %s ms", c.Profile, fms(c.MinAllDraws))
	}
	if len(cs) > 0 {
		out = append(out, busy)
	}
	for i := 1; i < len(cs); i++ {
		a, b := cs[i-1], cs[i]
		want, got := b.RTT-a.RTT, b.P50-a.P50
		tol := max(10*time.Millisecond, want/4)
		out = append(out, controlCheck{
			What: fmt.Sprintf("%s to %s: the median key-to-draw moves by the round trip's change, %v (within %v)", a.Profile, b.Profile, want, tol),
			Pass: (got - want).Abs() <= tol,
			Why:  fmt.Sprintf("it moved by %s ms (p50 %s to %s ms)", fms(got), fms(a.P50), fms(b.P50)),
		})
	}
	return out
}

// controlCells reads the control's live runs and their live.json.
func controlCells(c spicelive.Config, all map[string]map[string]map[measure.Arm]*series, cells []results.Cell) []controlCell {
	var out []controlCell
	for _, cell := range cells {
		s := all[cell.Dir()][spicelive.ReadingLive][measure.TCP]
		if s == nil {
			continue
		}
		sc, err := s.summarise(c.Warmup)
		if err != nil {
			continue
		}
		cc := controlCell{Profile: cell.Profile, RTT: time.Duration(cell.RTTms * float64(time.Millisecond)), P50: sc.P50, Repeats: sc.Measured,
			Min: -1, MinAllDraws: -1}
		for _, run := range s.runs {
			if run.Failed != "" || run.Err != nil {
				continue
			}
			rec := run.Rec
			for _, x := range rec.Analysis.Samples {
				if x.Offset >= c.Warmup && (cc.Min < 0 || x.RTT < cc.Min) {
					cc.Min = x.RTT
				}
			}
			if cc.MinAllDraws < 0 || rec.Analysis.AllDrawsMin < cc.MinAllDraws {
				cc.MinAllDraws = rec.Analysis.AllDrawsMin
			}
		}
		out = append(out, cc)
	}
	return out
}

// errControlFailed says a check of the control failed.
var errControlFailed = errors.New("the control failed")

func summariseControl(w io.Writer, c spicelive.Config, all map[string]map[string]map[measure.Arm]*series, cells []results.Cell) error {
	cc := controlCells(c, all, cells)
	fmt.Fprintf(w, "# Control of the live figure\n\nLive sessions on the tcp arm, no loss; key-to-draw in milliseconds.\n\n")
	fmt.Fprintln(w, "| link | round trip | repeats | p50 | shortest key-to-draw | shortest key to any draw |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|")
	for _, x := range cc {
		fmt.Fprintf(w, "| %s | %v | %d | %s | %s | %s |\n", x.Profile, x.RTT, x.Repeats, fms(x.P50), fms(x.Min), fms(x.MinAllDraws))
	}
	fmt.Fprintln(w)
	pixelTable(w, c, all, cells)
	checks := append(checkControl(cc), pixelControlChecks(c, all, cells)...)
	failed := 0
	for _, k := range checks {
		mark := "pass"
		if !k.Pass {
			mark, failed = "FAIL", failed+1
		}
		fmt.Fprintf(w, "- %s: %s (%s)\n", mark, k.What, k.Why)
	}
	if len(cc) < 2 {
		fmt.Fprintln(w, "- the round trip's change needs two links measured")
		failed++
	}
	if failed > 0 {
		return fmt.Errorf("%w: %d checks", errControlFailed, failed)
	}
	return nil
}
