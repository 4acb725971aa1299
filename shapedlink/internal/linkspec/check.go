package linkspec

import (
	"fmt"
	"slices"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/disttable"
)

// Check returns the option key of the first setting of d that is out of
// range, that a backend would not apply as written, or that another
// setting makes meaningless, with the reason; two empty strings when d is
// sound. It is the one check of a direction: a profile runs it when it is
// parsed, and the emulator again on the configuration it is handed.
// CheckLoaded adds the schedule's and the trace's contents.
func (d Direction) Check() (key, reason string) {
	if k, r := d.checkValues(); r != "" {
		return k, r
	}
	return d.checkOverlaps()
}

// CheckLoaded is Check for a direction with its schedule and trace loaded
// (Changes, TraceMs): it also checks their contents, and them against the
// settings beside them.
func (d Direction) CheckLoaded() (key, reason string) {
	if k, r := d.Check(); r != "" {
		return k, r
	}
	return d.checkTimeVarying()
}

// checkValues checks each value's range and that it is applied as
// written.
func (d Direction) checkValues() (key, reason string) {
	switch {
	case d.Delay < 0 || d.Delay > MaxRTT:
		return "delay", fmt.Sprintf("must be between 0 and %d ms", MaxRTT.Milliseconds())
	case MicrosReason(d.Delay) != "":
		return "delay", MicrosReason(d.Delay)
	case !(d.RateMbit > 0) || d.RateMbit > MaxRateMbit:
		return "rate", fmt.Sprintf("must be positive and at most %d", MaxRateMbit)
	case !WholeBytes(d.RateMbit):
		return "rate", FmtNum(d.RateMbit) + " Mbit/s " + RateReason(d.RateMbit)
	case !(d.LossPct >= 0 && d.LossPct < 100):
		return "loss", "must satisfy 0 <= loss < 100"
	case d.HasGE && !(d.GE.MeanLoss() < 100):
		return "loss", fmt.Sprintf("%s loses %s%% of packets in the long run; the mean loss must be under 100%%, as loss_pct's is", d.GE, FmtNum(d.GE.MeanLoss()))
	case d.HasFourState && d.FourState.check() != nil:
		return "loss", d.FourState.check().Error()
	case d.HasFourState && !(d.FourState.MeanLoss() < 100):
		return "loss", fmt.Sprintf("%s loses %s%% of packets in the long run (state 3, a loss in a burst, is never left); the mean loss must be under 100%%, as loss_pct's is", d.FourState, FmtNum(d.FourState.MeanLoss()))
	case d.Limit < 1 || d.Limit > MaxLimit:
		return "limit", fmt.Sprintf("must be between 1 and %d", MaxLimit)
	case d.HeldLimit() > MaxLimit:
		return "limit", fmt.Sprintf("%d with the delay line's %d makes %d held at once; at most %d", d.Limit, d.HeldLimit()-d.Limit, d.HeldLimit(), MaxLimit)
	case d.Jitter < 0 || d.Jitter > MaxJitterMs*time.Millisecond:
		return "jitter", fmt.Sprintf("must be between 0 and %d ms", MaxJitterMs)
	case MicrosReason(d.Jitter) != "":
		return "jitter", MicrosReason(d.Jitter)
	case d.JitterDist != "" && d.JitterDist != "uniform" && !slices.Contains(disttable.Names(), d.JitterDist):
		return "jitter", fmt.Sprintf("names distribution %q; the distributions are uniform (the default), normal, pareto and paretonormal", d.JitterDist)
	case d.ReorderGap < 0:
		return "reorder", "has a negative gap"
	case MicrosReason(d.Queue.Target) != "":
		return "target", MicrosReason(d.Queue.Target)
	case MicrosReason(d.Queue.Interval) != "":
		return "interval", MicrosReason(d.Queue.Interval)
	}
	if d.Queue.Managed() {
		if err := d.Queue.Config(d.Limit).WithDefaults().Validate(); err != nil {
			return "qdisc", err.Error()
		}
	}
	for _, pc := range []struct {
		key string
		v   float64
	}{
		{"loss", d.LossPct}, {"loss", d.LossCorr}, {"jitter", d.JitterCorr},
		{"loss", d.GE.P}, {"loss", d.GE.R}, {"loss", d.GE.OneMinusH}, {"loss", d.GE.OneMinusK},
		{"dup", d.DupPct}, {"dup", d.DupCorr}, {"reorder", d.ReorderPct}, {"reorder", d.ReorderCorr},
	} {
		if r := PctReason(pc.v); r != "" {
			return pc.key, FmtNum(pc.v) + " " + r
		}
	}
	return "", ""
}

// checkOverlaps finds pairs of settings that cannot both apply (one
// would be ignored).
func (d Direction) checkOverlaps() (key, reason string) {
	switch {
	case d.HasGE && (d.LossPct != 0 || d.LossCorr != 0):
		return "loss", "has both an independent loss and the Gilbert-Elliott model; a direction has one loss model"
	case d.HasFourState && (d.LossPct != 0 || d.LossCorr != 0 || d.HasGE):
		return "loss", "has the 4-state model beside an independent loss or the Gilbert-Elliott model; a direction has one loss model"
	case !d.Queue.Managed() && d.Queue != (Queue{}):
		return "qdisc", "target, interval, flows, quantum and ecn need qdisc=codel or qdisc=fq_codel"
	case d.Queue.Kind != FQCoDel && (d.Queue.Flows != 0 || d.Queue.Quantum != 0):
		return "qdisc", "flows and quantum are fq_codel's; codel has one queue"
	case d.Queue.Managed() && (d.DupPct > 0 || d.ReorderPct > 0):
		return "qdisc", "a queue discipline is not combined with dup or reorder (yet)"
	case d.Queue.Managed() && (d.Schedule != "" || d.Trace != ""):
		return "qdisc", "a queue discipline is not combined with a schedule or a trace (yet)"
	case d.ReorderPct > 0 && d.Delay == 0:
		return "reorder", "needs a delay in that direction: reordering sends a packet ahead of the delayed ones (tc refuses it too)"
	case d.Jitter == 0 && (d.JitterDist != "" || d.JitterCorr != 0):
		return "jitter", "is 0 with a distribution or a correlation, which shape nothing without a spread; give a jitter above 0 or only 0"
	case d.LossPct == 0 && d.LossCorr != 0 && d.Schedule == "":
		return "loss", fmt.Sprintf("is 0%% with a correlation of %s%%, which correlates nothing; give a loss above 0 or no correlation", FmtNum(d.LossCorr))
	case d.DupPct == 0 && d.DupCorr != 0:
		return "dup", fmt.Sprintf("is 0%% with a correlation of %s%%, which correlates nothing; give a duplication above 0 or no correlation", FmtNum(d.DupCorr))
	case d.ReorderPct == 0 && (d.ReorderCorr != 0 || d.ReorderGap > 1):
		return "reorder", "is 0% with a correlation or a gap, which apply to no packet; give a reordering above 0 or only 0"
	}
	return "", ""
}

// checkTimeVarying checks a loaded schedule and trace: their own values,
// and against the settings beside them (a schedule that changes what the
// direction does not have, or has nothing for it).
func (d Direction) checkTimeVarying() (key, reason string) {
	if len(d.TraceMs) > 0 {
		if r := checkTrace(d.TraceMs); r != "" {
			return "trace", r
		}
	}
	if d.Schedule == "" && len(d.Changes) == 0 {
		return "", ""
	}
	s := Schedule{Spec: d.Schedule, Period: d.SchedulePeriod, Changes: d.Changes}
	sets := func(what string) bool {
		return slices.ContainsFunc(s.Changes, func(c Change) bool { return c.Set == what })
	}
	switch {
	case len(s.Changes) == 0:
		return "schedule", fmt.Sprintf("%s has no change for this direction (every change names the other), so it would do nothing there", s.Spec)
	case d.Trace != "" && sets("rate"):
		return "schedule", fmt.Sprintf("%s changes the rate, which the direction's trace (%s) replaces", s.Spec, d.Trace)
	case d.HasGE && sets("loss"):
		return "schedule", fmt.Sprintf("%s changes the loss, which the direction's Gilbert-Elliott model (%s) replaces", s.Spec, d.GE)
	case d.HasFourState && sets("loss"):
		return "schedule", fmt.Sprintf("%s changes the loss, which the direction's 4-state model (%s) replaces", s.Spec, d.FourState)
	case d.LossPct == 0 && d.LossCorr != 0 && !sets("loss"):
		return "loss", fmt.Sprintf("is 0%% with a correlation of %s%% and the schedule %s sets no loss, so it correlates nothing", FmtNum(d.LossCorr), s.Spec)
	}
	if err := s.validate(); err != nil {
		return "schedule", err.Error()
	}
	return "", ""
}

// checkTrace checks a trace's opportunities: never back in time, and a
// period above zero.
func checkTrace(ms []uint32) string {
	if ms[len(ms)-1] == 0 {
		return "lasts no time (its last opportunity, the period, is at 0 ms)"
	}
	for i := 1; i < len(ms); i++ {
		if ms[i] < ms[i-1] {
			return fmt.Sprintf("goes back in time at entry %d", i)
		}
	}
	if len(ms) > MaxTraceLines {
		return fmt.Sprintf("has %d opportunities; at most %d", len(ms), MaxTraceLines)
	}
	return ""
}

// JitterCDF returns the distribution function of the delay variation d
// draws for a frame, as netem draws it and the emulator does: the
// probability that a frame's delay is at most Delay+x. Uniform jitter is
// uniform on [-Jitter, Jitter); a named distribution is its table (4096
// quantiles, scaled by Jitter). It is what one frame draws, before the
// rate (a frame never leaves ahead of the one before it when the link has
// a rate) and without correlation. It returns nil when d has no jitter.
func (d Direction) JitterCDF() func(x time.Duration) float64 {
	j := float64(d.Jitter)
	if j <= 0 {
		return nil
	}
	if d.JitterDist == "" {
		return func(x time.Duration) float64 {
			return min(1, max(0, (float64(x)+j)/(2*j)))
		}
	}
	t, err := disttable.Table(d.JitterDist)
	if err != nil {
		return nil // ParseProfile accepts only the table's names
	}
	vals := make([]float64, len(t))
	for i, v := range t {
		vals[i] = j * float64(v) / disttable.Scale
	}
	slices.Sort(vals)
	return func(x time.Duration) float64 {
		n, _ := slices.BinarySearchFunc(vals, float64(x), func(v, x float64) int {
			if v <= x {
				return -1
			}
			return 1
		})
		return float64(n) / float64(len(vals))
	}
}
