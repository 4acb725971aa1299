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

// Validate reports whether p can be applied, naming the offending field.
// It does not read p's schedule or trace files; New and ParseProfile do.
func (p Profile) Validate() error {
	fail := func(field, reason string) error {
		return &ProfileError{Input: p.String(), Field: field, Reason: reason}
	}
	switch {
	case p.RTT <= 0:
		return fail("rtt_ms", "must be positive")
	case p.RTT > MaxRTT:
		return fail("rtt_ms", fmt.Sprintf("must be at most %d", MaxRTT.Milliseconds()))
	case !(p.RateMbit > 0): // also rejects NaN
		return fail("rate_mbit", "must be positive")
	case p.RateMbit > MaxRateMbit:
		return fail("rate_mbit", fmt.Sprintf("must be at most %d", MaxRateMbit))
	case !linkspec.WholeBytes(p.RateMbit):
		return fail("rate_mbit", fmtNum(p.RateMbit)+" Mbit/s "+linkspec.RateReason(p.RateMbit))
	case !(p.LossPct >= 0 && p.LossPct < 100):
		return fail("loss_pct", "must satisfy 0 <= loss_pct < 100")
	case linkspec.PctReason(p.LossPct) != "":
		return fail("loss_pct", fmtNum(p.LossPct)+" "+linkspec.PctReason(p.LossPct))
	case p.Limit < 1 || p.Limit > MaxLimit:
		return fail("limit_pkts", fmt.Sprintf("must be between 1 and %d (the default for this profile is %d)", MaxLimit, DefaultLimit(p.RateMbit, p.RTT)))
	}
	return p.validateDirections()
}
