package shapedlink

import (
	"fmt"
	"slices"
	"time"
)

// validateDirections checks each direction as the base is checked, with
// everything resolved: the values it applies, and options that another
// makes meaningless.
func (p Profile) validateDirections() error {
	for _, d := range []Dir{Down, Up} {
		field, reason := p.checkDirection(d)
		if reason == "" {
			field, reason = p.checkOverlaps(d)
		}
		if reason != "" {
			return &ProfileError{Input: p.String(), Field: field, Reason: reason}
		}
	}
	if p.RoundTrip() <= 0 {
		return &ProfileError{Input: p.String(), Field: "delay", Reason: "leaves a round trip of zero; at least one direction needs a delay"}
	}
	return nil
}

// checkDirection returns the field and the reason of the first value of
// direction d that is out of range or that a backend would not apply as
// written, or "" for both.
func (p Profile) checkDirection(d Dir) (field, reason string) {
	dir, o := p.Direction(d), p.opts(d)
	f := func(name string) string { return d.String() + "." + name }
	if r := microsReason(dir.Delay); r != "" {
		if !o.HasDelay {
			return "rtt_ms", fmt.Sprintf("%s gives each direction half of it, which %s: use an even number of microseconds", fmtNum(float64(p.RTT)/1e6), r)
		}
		return f("delay"), r
	}
	if o.IsZero() {
		return "", "" // the base's values, checked by Validate
	}
	switch {
	case dir.Delay < 0 || dir.Delay > MaxRTT:
		return f("delay"), fmt.Sprintf("must be between 0 and %d ms", MaxRTT.Milliseconds())
	case !(dir.RateMbit > 0) || dir.RateMbit > MaxRateMbit:
		return f("rate"), fmt.Sprintf("must be positive and at most %d", MaxRateMbit)
	case !wholeBytes(dir.RateMbit):
		return f("rate"), fmtNum(dir.RateMbit) + " Mbit/s " + rateReason(dir.RateMbit)
	case !(dir.LossPct >= 0 && dir.LossPct < 100):
		return f("loss"), "must satisfy 0 <= loss < 100"
	case dir.HasGE && !(dir.GE.MeanLoss() < 100):
		return f("loss"), fmt.Sprintf("%s loses %s%% of packets in the long run; the mean loss must be under 100%%, as loss_pct's is", dir.GE, fmtNum(dir.GE.MeanLoss()))
	case dir.Limit < 1 || dir.Limit > MaxLimit:
		return f("limit"), fmt.Sprintf("must be between 1 and %d", MaxLimit)
	case dir.Jitter < 0 || dir.Jitter > maxJitterMs*time.Millisecond:
		return f("jitter"), fmt.Sprintf("must be between 0 and %d ms", maxJitterMs)
	case microsReason(dir.Jitter) != "":
		return f("jitter"), microsReason(dir.Jitter)
	case microsReason(dir.Queue.Target) != "":
		return f("target"), microsReason(dir.Queue.Target)
	case microsReason(dir.Queue.Interval) != "":
		return f("interval"), microsReason(dir.Queue.Interval)
	}
	for _, pc := range []struct {
		key string
		v   float64
	}{
		{"loss", dir.LossPct}, {"loss", dir.LossCorr}, {"jitter", dir.JitterCorr},
		{"loss", dir.GE.P}, {"loss", dir.GE.R}, {"loss", dir.GE.OneMinusH}, {"loss", dir.GE.OneMinusK},
		{"dup", dir.DupPct}, {"dup", dir.DupCorr}, {"reorder", dir.ReorderPct}, {"reorder", dir.ReorderCorr},
	} {
		if r := pctReason(pc.v); r != "" {
			return f(pc.key), fmtNum(pc.v) + " " + r
		}
	}
	return "", ""
}

// checkOverlaps returns the field and the reason of the first pair of
// settings of direction d that cannot both apply (one would be ignored),
// or "" for both. Those that need the schedule's contents are
// checkTimeVarying's.
func (p Profile) checkOverlaps(d Dir) (field, reason string) {
	dir, o := p.Direction(d), p.opts(d)
	f := func(name string) string { return d.String() + "." + name }
	switch {
	case dir.Queue.Kind == "" && dir.Queue != (Queue{}):
		return f("qdisc"), "target, interval, flows, quantum and ecn need qdisc=codel or qdisc=fq_codel"
	case dir.Queue.Kind != "fq_codel" && (dir.Queue.Flows != 0 || dir.Queue.Quantum != 0):
		return f("qdisc"), "flows and quantum are fq_codel's; codel has one queue"
	case dir.Queue.Kind != "" && (dir.DupPct > 0 || dir.ReorderPct > 0):
		return f("qdisc"), "a queue discipline is not combined with dup or reorder (yet)"
	case dir.Queue.Kind != "" && (dir.Schedule != "" || dir.Trace != ""):
		return f("qdisc"), "a queue discipline is not combined with a schedule or a trace (yet)"
	case dir.ReorderPct > 0 && dir.Delay == 0:
		return f("reorder"), "needs a delay in that direction: reordering sends a packet ahead of the delayed ones (tc refuses it too)"
	case o.HasRate && o.Trace != "":
		return f("rate"), fmt.Sprintf("%s would be ignored: the %s direction's rate is its trace (%s); give the rate only to the other direction, or drop it", fmtNum(o.RateMbit), d, o.Trace)
	case dir.Jitter == 0 && (dir.JitterDist != "" || dir.JitterCorr != 0):
		return f("jitter"), "is 0 with a distribution or a correlation, which shape nothing without a spread; give a jitter above 0 or only 0"
	case dir.LossPct == 0 && dir.LossCorr != 0 && dir.Schedule == "":
		return f("loss"), fmt.Sprintf("is 0%% with a correlation of %s%%, which correlates nothing; give a loss above 0 or no correlation", fmtNum(dir.LossCorr))
	case dir.DupPct == 0 && dir.DupCorr != 0:
		return f("dup"), fmt.Sprintf("is 0%% with a correlation of %s%%, which correlates nothing; give a duplication above 0 or no correlation", fmtNum(dir.DupCorr))
	case dir.ReorderPct == 0 && (dir.ReorderCorr != 0 || dir.ReorderGap > 1):
		return f("reorder"), "is 0% with a correlation or a gap, which apply to no packet; give a reordering above 0 or only 0"
	}
	return "", ""
}

// checkTimeVarying checks p's schedules and traces, as loaded in tv,
// against the options beside them: a schedule that has no change for a
// direction it is given to, or that changes what the direction does not
// have (the rate where a trace is the rate, the loss where the
// Gilbert-Elliott model is), and a loss correlation with no loss that no
// schedule gives one.
func (p Profile) checkTimeVarying(tv timeVarying) error {
	for _, d := range []Dir{Down, Up} {
		s, dir := tv.sched[d], p.Direction(d)
		if s == nil {
			continue
		}
		sets := func(what string) bool {
			return slices.ContainsFunc(s.Changes, func(c Change) bool { return c.Set == what })
		}
		f := d.String() + ".schedule"
		reason := ""
		switch {
		case len(s.Changes) == 0:
			reason = fmt.Sprintf("%s has no change for the %s direction (every change names the other), so it would do nothing there", s.Spec, d)
		case tv.trace[d] != nil && sets("rate"):
			reason = fmt.Sprintf("%s changes the rate, which the %s direction's trace (%s) replaces", s.Spec, d, dir.Trace)
		case dir.HasGE && sets("loss"):
			reason = fmt.Sprintf("%s changes the loss, which the %s direction's Gilbert-Elliott model (%s) replaces", s.Spec, d, dir.GE)
		case dir.LossPct == 0 && dir.LossCorr != 0 && !sets("loss"):
			f = d.String() + ".loss"
			reason = fmt.Sprintf("is 0%% with a correlation of %s%% and the schedule %s sets no loss, so it correlates nothing", fmtNum(dir.LossCorr), s.Spec)
		}
		if reason != "" {
			return &ProfileError{Input: p.String(), Field: f, Reason: reason}
		}
	}
	return nil
}
