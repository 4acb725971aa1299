package shapedlink

import (
	"fmt"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// validateDirections checks each direction as the base is checked, with
// everything resolved (linkspec's one check of a direction: every value
// in range and applied as written, no option that another makes
// meaningless), and the round trip.
func (p Profile) validateDirections() error {
	for _, d := range []Dir{Down, Up} {
		if field, reason := p.checkDirection(d); reason != "" {
			return &ProfileError{Input: p.String(), Field: field, Reason: reason}
		}
	}
	if p.RoundTrip() <= 0 {
		return &ProfileError{Input: p.String(), Field: "delay", Reason: "leaves a round trip of zero; at least one direction needs a delay"}
	}
	return nil
}

// checkDirection returns the field and the reason of the first setting of
// direction d that is not sound, or "" for both.
func (p Profile) checkDirection(d Dir) (field, reason string) {
	dir, o := p.Direction(d), p.opts(d)
	if r := linkspec.MicrosReason(dir.Delay); r != "" && !o.Has("delay") {
		return "rtt_ms", fmt.Sprintf("%s gives each direction half of it, which %s: use an even number of microseconds", fmtNum(float64(p.RTT)/1e6), r)
	}
	if o.IsZero() {
		return "", "" // the base's values, checked by Validate
	}
	if o.Has("rate") && o.Has("trace") {
		r, _ := o.Value("rate")
		t, _ := o.Value("trace")
		return d.String() + ".rate", fmt.Sprintf("%s would be ignored: the %s direction's rate is its trace (%s); give the rate only to the other direction, or drop it", r, d, t)
	}
	if key, why := dir.Check(); why != "" {
		return d.String() + "." + key, why
	}
	return "", ""
}
