package report

import (
	"slices"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/stats"
)

// The interactive channel's recovery after a link's scheduled events (a
// blackout beginning, the rate stepping down), from a run's samples and
// the changes its link recorded.

// Recovery criteria: the baseline is the median round trip over the
// baselineWindow before the event; the channel has recovered when
// recoveredRun echoes in a row, the first sent after the event ended (the
// link back up, the rate back), come back within recoveredWithin of the
// baseline. The recovery time runs from the event's end to the arrival of
// the first of them.
const (
	baselineWindow  = 2 * time.Second
	recoveredRun    = 3
	recoveredWithin = 0.10
)

// eventRecovery is one event in one run.
type eventRecovery struct {
	Set   string  `json:"set"` // "down" (a blackout) or "rate" (a step down)
	AtMs  float64 `json:"at_ms"`
	EndMs float64 `json:"end_ms"` // when the link was back (up, or the rate restored)
	// Baseline is the median round trip in the 2 s before the event.
	Baseline time.Duration `json:"baseline_ns"`
	// Recovery is from the event's end to the recovered echo's arrival;
	// -1 when the channel had not recovered before the next event or the
	// run's end.
	Recovery time.Duration `json:"recovery_ns"`
}

// event is a disturbance: a blackout (down until up) or a step down of
// the rate (until a change restores at least the rate before it), in
// either direction; simultaneous changes of the two directions (a
// schedule given to both) are one event.
type event struct {
	set        string
	start, end time.Time
}

// events pairs r's changes into disturbances.
func events(r results.Run) []event {
	var out []event
	open := map[string]int{}       // direction -> index into out of its open event
	before := map[string]float64{} // direction -> rate before its open step
	rate := map[string]float64{}
	for _, c := range r.Link.Changes {
		cur, known := rate[c.Dir]
		if !known {
			cur = rateBefore(r, c)
		}
		switch {
		case c.Set == "down":
			open[c.Dir] = addEvent(&out, "down", c.At)
		case c.Set == "up":
			if i, ok := open[c.Dir]; ok {
				out[i].end = later(out[i].end, c.At)
				delete(open, c.Dir)
			}
		case c.Set == "rate" && c.Value < cur:
			if _, ok := open[c.Dir]; !ok {
				open[c.Dir], before[c.Dir] = addEvent(&out, "rate", c.At), cur
			}
		case c.Set == "rate":
			if i, ok := open[c.Dir]; ok && out[i].set == "rate" && c.Value >= before[c.Dir] {
				out[i].end = later(out[i].end, c.At)
				delete(open, c.Dir)
			}
		}
		if c.Set == "rate" {
			rate[c.Dir] = c.Value
		}
	}
	// Events still open at the run's end have no end.
	return slices.DeleteFunc(out, func(e event) bool { return e.end.IsZero() })
}

// addEvent appends an event of kind set starting at at, or joins one of
// the same kind that started at the same time (within a millisecond), and
// returns its index.
func addEvent(out *[]event, set string, at time.Time) int {
	for i, e := range *out {
		if e.set == set && e.start.Sub(at).Abs() <= time.Millisecond {
			return i
		}
	}
	*out = append(*out, event{set: set, start: at})
	return len(*out) - 1
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// recoveries finds the disturbances in r (a blackout, a step down of the
// rate) that start after its warm-up with a baseline before them, and how
// long after each ended the interactive channel was back. The round trip
// crosses both directions, so events of either count.
func recoveries(r results.Run) []eventRecovery {
	if r.SamplesStart.IsZero() || len(r.Link.Changes) == 0 {
		return nil
	}
	evs := events(r)
	var out []eventRecovery
	for i, e := range evs {
		at, end := e.start.Sub(r.SamplesStart), e.end.Sub(r.SamplesStart)
		if at < r.Warmup+baselineWindow {
			continue
		}
		limit := time.Duration(1<<63 - 1)
		if i+1 < len(evs) {
			limit = evs[i+1].start.Sub(r.SamplesStart)
		}
		er := eventRecovery{Set: e.set, AtMs: ms(at), EndMs: ms(end), Baseline: baseline(r.Samples, at), Recovery: -1}
		if er.Baseline > 0 {
			er.Recovery = recovery(r.Samples, end, limit, er.Baseline)
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
// recoveredRun consecutive echoes sent at or after at whose round trips
// are within recoveredWithin of base, or -1 if there is no such run
// before end.
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
			for _, e := range recoveries(r) {
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

// Timeline is one run's interactive round trips against time, with the
// link's scheduled changes, for the timeline plot.
type Timeline struct {
	Repeat  int
	Samples []stats.Sample
	Events  []EventMark
}

// EventMark is a scheduled change placed on a run's sample time axis.
type EventMark struct {
	At  time.Duration
	Set string
}

// firstTimeline is the first unfailed run of rs with scheduled changes.
func firstTimeline(rs []results.Run) *Timeline {
	for _, r := range rs {
		if r.Failed != "" || r.SamplesStart.IsZero() || len(r.Link.Changes) == 0 {
			continue
		}
		tl := &Timeline{Repeat: r.Repeat, Samples: r.Samples}
		for _, c := range r.Link.Changes {
			if at := c.At.Sub(r.SamplesStart); at >= 0 {
				tl.Events = append(tl.Events, EventMark{At: at, Set: c.Set})
			}
		}
		return tl
	}
	return nil
}
