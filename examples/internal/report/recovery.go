package report

import (
	"fmt"
	"image/color"
	"slices"
	"strconv"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/shakenfist/quicbench/examples/internal/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/stats"
)

// The interactive channel's recovery after a link's scheduled events (a
// blackout beginning, the rate stepping down), from a run's samples and
// the changes its link recorded.

// Recovery criteria: the baseline is the median round trip over the
// baselineWindow before the event; the channel has recovered when
// recoveredRun echoes in a row, the first sent after the event, come back
// within recoveredWithin of the baseline. The recovery time runs from the
// event to the arrival of the first of them.
const (
	baselineWindow  = 2 * time.Second
	recoveredRun    = 3
	recoveredWithin = 0.10
)

// EventRecovery is one event in one run.
type EventRecovery struct {
	Set      string        `json:"set"` // "down" or "rate"
	AtMs     float64       `json:"at_ms"`
	Baseline time.Duration `json:"baseline_ns"`
	// Recovery is from the event to the recovered echo's arrival; -1 when
	// the channel had not recovered before the next event or the run's
	// end.
	Recovery time.Duration `json:"recovery_ns"`
}

// Recoveries finds the events in r (a blackout beginning, a rate
// lowered) after its warm-up and with a baseline before them, and how
// long the interactive channel took to recover from each. Events in
// either direction count: the interactive round trip crosses both.
func Recoveries(r results.Run) []EventRecovery {
	if r.SamplesStart.IsZero() || len(r.Link.Changes) == 0 {
		return nil
	}
	var events []shapedlink.AppliedChange
	lastRate := map[string]float64{}
	for _, c := range r.Link.Changes {
		switch c.Set {
		case "down":
			events = append(events, c)
		case "rate":
			if prev, ok := lastRate[c.Dir]; ok && c.Value < prev || !ok && c.Value < rateBefore(r, c) {
				events = append(events, c)
			}
			lastRate[c.Dir] = c.Value
		}
	}
	var out []EventRecovery
	for i, e := range events {
		at := e.At.Sub(r.SamplesStart)
		if at < r.Warmup+baselineWindow {
			continue
		}
		end := time.Duration(1<<63 - 1)
		if i+1 < len(events) {
			end = events[i+1].At.Sub(r.SamplesStart)
		}
		er := EventRecovery{Set: e.Set, AtMs: ms(at), Baseline: baseline(r.Samples, at), Recovery: -1}
		if er.Baseline > 0 {
			er.Recovery = recovery(r.Samples, at, end, er.Baseline)
		}
		out = append(out, er)
	}
	return out
}

// rateBefore is the rate a direction had before its first recorded rate
// change: the profile's, so a first change that lowers it counts.
func rateBefore(r results.Run, c shapedlink.AppliedChange) float64 {
	p, err := shapedlink.ParseProfile(r.Cell.Profile)
	if err != nil {
		return 0
	}
	d := shapedlink.Down
	if c.Dir == "up" {
		d = shapedlink.Up
	}
	return p.Direction(d).RateMbit
}

// baseline is the median round trip of the echoes sent in the window
// before at, or 0 if there were none.
func baseline(s []stats.Sample, at time.Duration) time.Duration {
	var rtts []time.Duration
	for _, x := range s {
		if x.Offset >= at-baselineWindow && x.Offset < at && x.Offset+x.RTT <= at {
			rtts = append(rtts, x.RTT)
		}
	}
	if len(rtts) == 0 {
		return 0
	}
	slices.Sort(rtts)
	return rtts[(len(rtts)-1)/2]
}

// recovery is the time from at to the arrival of the first of
// recoveredRun consecutive echoes sent after at whose round trips are
// within recoveredWithin of base, or -1 if there is no such run before
// end.
func recovery(s []stats.Sample, at, end, base time.Duration) time.Duration {
	limit := time.Duration(float64(base) * (1 + recoveredWithin))
	streak := 0
	var first stats.Sample
	for _, x := range s {
		if x.Offset < at {
			continue
		}
		if x.Offset >= end {
			break
		}
		if x.RTT > limit {
			streak = 0
			continue
		}
		if streak == 0 {
			first = x
		}
		if streak++; streak == recoveredRun {
			return first.Offset + first.RTT - at
		}
	}
	return -1
}

// RecoverySummary is an arm's recovery from one kind of event over its
// measured repeats.
type RecoverySummary struct {
	Set          string `json:"set"` // "down" (a blackout) or "rate" (a step down)
	Events       int    `json:"events"`
	NotRecovered int    `json:"not_recovered"`
	// MedianMs is the median recovery over every recovered event;
	// RepeatMedianMs each measured repeat's own median (0 where none of
	// its events recovered), in repeat order.
	MedianMs       float64   `json:"median_ms"`
	MaxMs          float64   `json:"max_ms"`
	RepeatMedianMs []float64 `json:"repeat_median_ms"`
}

// recoverySummaries groups the events of rs's unfailed runs by kind.
func recoverySummaries(rs []results.Run) []RecoverySummary {
	var out []RecoverySummary
	for _, set := range []string{"down", "rate"} {
		s := RecoverySummary{Set: set}
		var all []float64
		for _, r := range rs {
			if r.Failed != "" {
				continue
			}
			var mine []float64
			for _, e := range Recoveries(r) {
				if e.Set != set {
					continue
				}
				s.Events++
				if e.Recovery < 0 {
					s.NotRecovered++
					continue
				}
				mine = append(mine, ms(e.Recovery))
			}
			all = append(all, mine...)
			s.RepeatMedianMs = append(s.RepeatMedianMs, median(mine))
		}
		if s.Events == 0 {
			continue
		}
		s.MedianMs = median(all)
		if len(all) > 0 {
			s.MaxMs = slices.Max(all)
		}
		out = append(out, s)
	}
	return out
}

// median is the middle value (the lower of the two middle ones), or 0 for
// none.
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[(len(v)-1)/2]
}

func (r *Report) mdRecovery(m *md) {
	found := false
	for _, c := range r.Cells {
		for _, a := range c.Arms {
			found = found || len(a.Recovery) > 0
		}
	}
	if !found {
		return
	}
	m.p("## Recovery after the link's scheduled events")
	m.p("")
	m.p(proseRecovery)
	m.p("")
	m.header("profile", "loss", "arm", "event", "events", "not recovered", "median ms", "max ms", "per-repeat medians ms")
	for _, c := range r.Cells {
		for _, a := range c.Arms {
			for _, s := range a.Recovery {
				var reps []string
				for _, v := range s.RepeatMedianMs {
					reps = append(reps, strconv.FormatFloat(v, 'f', 0, 64))
				}
				event := "blackout"
				if s.Set == "rate" {
					event = "rate step down"
				}
				m.row(CellTitle(c.Cell), pct(c.Cell.LossPct), ArmLabel(a.Arm), event, strconv.Itoa(s.Events), strconv.Itoa(s.NotRecovered),
					fmt.Sprintf("%.0f", s.MedianMs), fmt.Sprintf("%.0f", s.MaxMs), strings.Join(reps, ", "))
			}
		}
	}
	m.p("")
}

// timeline is one run's interactive round trips against time, with the
// link's scheduled changes, for the timeline plot.
type timeline struct {
	repeat  int
	samples []stats.Sample
	events  []EventMark
}

// EventMark is a scheduled change placed on a run's sample time axis.
type EventMark struct {
	At  time.Duration
	Set string
}

// firstTimeline is the first unfailed run of rs with scheduled changes.
func firstTimeline(rs []results.Run) *timeline {
	for _, r := range rs {
		if r.Failed != "" || r.SamplesStart.IsZero() || len(r.Link.Changes) == 0 {
			continue
		}
		tl := &timeline{repeat: r.Repeat, samples: r.Samples}
		for _, c := range r.Link.Changes {
			if at := c.At.Sub(r.SamplesStart); at >= 0 {
				tl.events = append(tl.events, EventMark{At: at, Set: c.Set})
			}
		}
		return tl
	}
	return nil
}

// timelinePlot draws arm a's first scheduled run: its interactive round
// trips against time, with a grey line at each scheduled change (dashed
// for a link coming back up or a rate going back).
func timelinePlot(c *CellReport, a *ArmReport) (*plot.Plot, string, string, error) {
	tl := a.timeline
	if tl == nil || len(tl.samples) == 0 {
		return nil, "", "", nil
	}
	p := newPlot(fmt.Sprintf("%s, %s, r%d: interactive round trip over time", c.Label(), a.Arm, tl.repeat), "time since the channels opened (s)", "round trip (ms)")
	pts := make(plotter.XYs, len(tl.samples))
	top := 0.0
	for i, s := range tl.samples {
		pts[i] = plotter.XY{X: s.Offset.Seconds(), Y: ms(s.RTT)}
		top = max(top, ms(s.RTT))
	}
	l, err := plotter.NewLine(pts)
	if err != nil {
		return nil, "", "", err
	}
	l.Color = armColor(a.Arm)
	l.Width = vg.Points(1)
	p.Add(l)
	p.Y.Min = 0
	for _, e := range tl.events {
		m, err := plotter.NewLine(plotter.XYs{{X: e.At.Seconds(), Y: 0}, {X: e.At.Seconds(), Y: top * 1.05}})
		if err != nil {
			return nil, "", "", err
		}
		m.Color = color.Gray{Y: 0x80}
		if e.Set == "up" {
			m.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
		}
		p.Add(m)
	}
	caption := fmt.Sprintf(captionTimeline, c.Label(), a.Arm, tl.repeat, len(tl.samples), len(tl.events))
	return p, c.Dir + "_" + a.Arm + "_timeline", caption, nil
}
