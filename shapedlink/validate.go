package shapedlink

import "fmt"

// validateDirections checks each direction as the base is checked.
func (p Profile) validateDirections() error {
	for _, d := range []Dir{Down, Up} {
		if p.opts(d).IsZero() {
			continue
		}
		dir := p.Direction(d)
		field := func(name string) string { return d.String() + "." + name }
		switch {
		case dir.Delay < 0 || dir.Delay > MaxRTT:
			return &ProfileError{Input: p.String(), Field: field("delay"), Reason: fmt.Sprintf("must be between 0 and %d ms", MaxRTT.Milliseconds())}
		case !(dir.RateMbit > 0) || dir.RateMbit > MaxRateMbit:
			return &ProfileError{Input: p.String(), Field: field("rate"), Reason: fmt.Sprintf("must be positive and at most %d", MaxRateMbit)}
		case !(dir.LossPct >= 0 && dir.LossPct < 100):
			return &ProfileError{Input: p.String(), Field: field("loss"), Reason: "must satisfy 0 <= loss < 100"}
		case dir.Limit < 1 || dir.Limit > MaxLimit:
			return &ProfileError{Input: p.String(), Field: field("limit"), Reason: fmt.Sprintf("must be between 1 and %d", MaxLimit)}
		case dir.Queue.Kind == "" && dir.Queue != (Queue{}):
			return &ProfileError{Input: p.String(), Field: field("qdisc"), Reason: "target, interval, flows, quantum and ecn need qdisc=codel or qdisc=fq_codel"}
		case dir.Queue.Kind != "fq_codel" && (dir.Queue.Flows != 0 || dir.Queue.Quantum != 0):
			return &ProfileError{Input: p.String(), Field: field("qdisc"), Reason: "flows and quantum are fq_codel's; codel has one queue"}
		case dir.Queue.Kind != "" && (dir.DupPct > 0 || dir.ReorderPct > 0):
			return &ProfileError{Input: p.String(), Field: field("qdisc"), Reason: "a queue discipline is not combined with dup or reorder (yet)"}
		case dir.Queue.Kind != "" && (dir.Schedule != "" || dir.Trace != ""):
			return &ProfileError{Input: p.String(), Field: field("qdisc"), Reason: "a queue discipline is not combined with a schedule or a trace (yet)"}
		case dir.ReorderPct > 0 && dir.Delay == 0:
			return &ProfileError{Input: p.String(), Field: field("reorder"), Reason: "needs a delay in that direction: reordering sends a packet ahead of the delayed ones (tc refuses it too)"}
		}
	}
	if p.RoundTrip() <= 0 {
		return &ProfileError{Input: p.String(), Field: "delay", Reason: "leaves a round trip of zero; at least one direction needs a delay"}
	}
	return nil
}
