package summary

import (
	"fmt"
	"io"
	"strings"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/spicelive"
	"github.com/shakenfist/quicbench/measure/spicelive/picture"
	"github.com/shakenfist/quicbench/measure/spicelive/xsession"
	"github.com/shakenfist/quicbench/stats"
)

// runDisplay is a live run's display throughput and timed keys.
type runDisplay struct {
	repeat    int
	mbit      float64
	share     float64
	saturated bool
	keys      int
	picture   *picture.PictureRecord
}

// displayIntro says what the display workload was and how a run's display
// is judged.
func displayIntro(w io.Writer, c spicelive.Config) {
	fmt.Fprintf(w, "Display workload: %s, a %dx%d window", c.Display, c.DisplayWidth, c.DisplayHeight)
	switch c.Display {
	case xsession.DisplayVideo:
		fmt.Fprintf(w, " at %d frames a second", c.FrameRate)
	case xsession.DisplayImages:
		fmt.Fprintf(w, ", a new image every %v", c.ImageInterval)
	}
	fmt.Fprintf(w, ". A live run whose display channel carried less than %.0f%% of the link's rate in its measured part did not saturate; "+
		"keys are attributed by glyph, so they may overlap, and a key not drawn within %v is unanswered; in runs that waited for their keys' answers after the typing, "+
		"such a key counts in the percentiles at that timeout, and a percentile at it reads as at least that long (≥). "+
		"Beside each live run is the synthetic reading's bulk rate for the same arm, cell and loss, the transport's own ceiling on that link: "+
		"a run that did not saturate is put down to the transport when its display carried at least %.0f%% of that ceiling, and to the workload otherwise.\n\n",
		spicelive.SaturatedShare*100, c.KeyTimeout, spicelive.SaturatedShare*100)
	fmt.Fprintf(w, "The picture: frames/s at the client are the workload's distinct frames seen in spicy's window, and drawn those on Xspice's screen, "+
		"over the same measured part; of drawn is the first over the second, the stream and image shares are the display channel's bytes sent "+
		"as video stream frames and as images, and KB per frame its bytes per frame at the client. "+
		"A run's picture is good when the client saw at least %.0f%% of the frames a second the workload offers (GoodPictureShare), "+
		"however many of them Xspice drew.\n\n", 100*picture.GoodPictureShare)
}

// liveDisplay reads each measured run of s: its display channel's
// throughput in the measured part (run.json's) against the cell's rate,
// with the cross flows in its direction beside it counted as filling the
// link too, and its keys timed after the warm-up.
func liveDisplay(c spicelive.Config, s *series) []runDisplay {
	var out []runDisplay
	for _, run := range s.runs {
		if run.Failed != "" {
			continue
		}
		d := runDisplay{repeat: run.Repeat, mbit: run.ThroughputMbit, saturated: spicelive.Saturated(run.ThroughputMbit+crossMbit(run), s.cell.RateMbit)}
		if s.cell.RateMbit > 0 {
			d.share = run.ThroughputMbit / s.cell.RateMbit
		}
		if sum, err := stats.SummariseRepeat(run.StatsRepeat(), c.Warmup); err == nil {
			d.keys = sum.N
		}
		d.picture = runPicture(run)
		out = append(out, d)
	}
	return out
}

// notSaturated names the live runs of the series given whose display did
// not saturate the link, or "" when every one did.
func notSaturated(c spicelive.Config, ss ...*series) string {
	var names []string
	for _, s := range ss {
		for _, d := range liveDisplay(c, s) {
			if !d.saturated {
				names = append(names, fmt.Sprintf("%s r%d (%.2f Mbit/s)", s.arm, d.repeat, d.mbit))
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	return "Did not saturate: " + strings.Join(names, ", ") + "."
}

// transportCeiling is the synthetic reading's bulk Mbit/s (median over
// repeats) for arm in this cell, or false with the reason it is absent.
func transportCeiling(c spicelive.Config, byReading map[string]map[measure.Arm]*series, arm measure.Arm) (float64, string, bool) {
	ss := byReading[spicelive.ReadingSynthetic][arm]
	if ss == nil {
		return 0, "no synthetic reading of this arm in this cell", false
	}
	sc, err := ss.summarise(c.Warmup)
	if err != nil {
		return 0, "no synthetic repeat of this arm measured in this cell", false
	}
	return sc.Throughput.Median, "", true
}

// displayTable lists each live run's display throughput, its share of the
// link, and its timed keys, marking runs that did not saturate or timed
// fewer than MinTimedKeys; beside them, the synthetic reading's saturating
// channel in the same cell and arm, what the transport carries there, by
// which a run that did not saturate is put down to the transport or the
// workload.
func displayTable(w io.Writer, c spicelive.Config, byReading map[string]map[measure.Arm]*series) {
	var rows []string
	for _, arm := range c.Arms {
		s := byReading[spicelive.ReadingLive][arm]
		if s == nil {
			continue
		}
		ceiling, absent, ok := transportCeiling(c, byReading, arm)
		synth := "none: " + absent
		if ok {
			synth = fmt.Sprintf("%.2f", ceiling)
		}
		for _, d := range liveDisplay(c, s) {
			var marks []string
			if !d.saturated {
				switch {
				case !ok:
					marks = append(marks, "did not saturate; no synthetic reading to tell the transport's limit from the workload's")
				case spicelive.LimitedByTransport(d.mbit, ceiling):
					marks = append(marks, fmt.Sprintf("did not saturate: the transport's limit (%.0f%% of its synthetic %.2f)", 100*d.mbit/ceiling, ceiling))
				default:
					marks = append(marks, fmt.Sprintf("did not saturate: the workload's limit (%.0f%% of the transport's synthetic %.2f)", 100*d.mbit/ceiling, ceiling))
				}
			}
			if d.keys < spicelive.MinTimedKeys {
				marks = append(marks, fmt.Sprintf("fewer than %d timed keys", spicelive.MinTimedKeys))
			}
			rows = append(rows, fmt.Sprintf("| %s | r%d | %.2f | %.0f%% | %s | %d | %s | %s |", arm, d.repeat, d.mbit, d.share*100, synth, d.keys, strings.Join(marks, "; "),
				pictureColumns(d.picture)))
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "Each live run's display channel in its measured part, and its timed keys:")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| arm | repeat | display Mbit/s | of the link | synthetic bulk Mbit/s (the transport's ceiling) | timed keys | mark | "+
		"frames/s at the client | drawn | of drawn | stream share | image share | KB per frame | picture |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	fmt.Fprintln(w, strings.Join(rows, "\n"))
	fmt.Fprintln(w)
}
