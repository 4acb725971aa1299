package shapedlink

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// ProfileGrammar is the textual form of a Profile, as accepted by
// ParseProfile and produced by Profile.String.
const ProfileGrammar = "rtt_ms:rate_mbit[:loss_pct][@limit_pkts][,option...]"

// Bounds on the values a Profile may hold.
const (
	MaxRTT      = linkspec.MaxRTT      // longest round trip (and one-way delay), a minute
	MaxRateMbit = linkspec.MaxRateMbit // fastest rate, 100 Gbit/s
	MaxLimit    = linkspec.MaxLimit    // largest packet limit, 2^20
	MaxJitterMs = linkspec.MaxJitterMs // largest jitter, netem's s32 nanoseconds
)

// MinPct is the smallest non-zero percentage a profile accepts, one in
// ten million, which netem applies within 0.25% of its value.
const MinPct = linkspec.MinPct

// Profile describes a shaped link: the short form's round trip, rate,
// loss and limit, the same in both directions, and Down and Up, the
// options of each direction. Direction resolves a direction, which is what
// the backends apply.
type Profile struct {
	RTT      time.Duration // round-trip time; each direction gets RTT/2
	RateMbit float64       // rate of each direction, in Mbit/s (10^6 bit/s)
	LossPct  float64       // per-direction random loss in percent, 0 <= LossPct < 100
	Limit    int           // per-direction queue limit in packets

	Down, Up DirOptions // per-direction settings that differ from the base
}

// DefaultLimit is the packet limit a profile gets unless it names one:
// ceil(1.5 * rate * rtt / (8 * 1500)) + 10, 110 for 80 ms at 10 Mbit/s.
func DefaultLimit(rateMbit float64, rtt time.Duration) int {
	return linkspec.DefaultLimit(rateMbit, rtt)
}

// WithLoss returns a copy of p with the given loss in both directions
// (any per-direction loss option is dropped). The limit is unchanged.
// Call Validate (New does) to check the result.
func (p Profile) WithLoss(pct float64) Profile {
	p.LossPct = pct
	p.Down.Clear("loss")
	p.Up.Clear("loss")
	return p
}

// HasLoss reports whether either direction has random loss (independent,
// Gilbert-Elliott or 4-state).
func (p Profile) HasLoss() bool {
	d, u := p.Direction(Down), p.Direction(Up)
	return d.LossPct != 0 || u.LossPct != 0 || d.HasGE || u.HasGE || d.HasFourState || u.HasFourState
}

// WithLimit returns a copy of p with the given per-direction packet limit.
func (p Profile) WithLimit(pkts int) Profile {
	p.Limit = pkts
	return p
}

// String returns p in the grammar ParseProfile accepts: the loss field only
// when the loss is non-zero, the limit only when it differs from
// DefaultLimit. ParseProfile(p.String()) == p for every valid p.
func (p Profile) String() string {
	var b strings.Builder
	b.WriteString(fmtNum(float64(p.RTT) / 1e6))
	b.WriteByte(':')
	b.WriteString(fmtNum(p.RateMbit))
	if p.LossPct != 0 {
		b.WriteByte(':')
		b.WriteString(fmtNum(p.LossPct))
	}
	if p.Limit != DefaultLimit(p.RateMbit, p.RTT) {
		b.WriteByte('@')
		b.WriteString(strconv.Itoa(p.Limit))
	}
	b.WriteString(p.optionsString())
	return b.String()
}

func fmtNum(f float64) string { return linkspec.FmtNum(f) }

// ProfileError is returned for a profile that does not parse or validate.
type ProfileError struct {
	Input  string // the profile text as given (or as formatted)
	Field  string // rtt_ms, rate_mbit, loss_pct, limit_pkts or "" for the shape
	Reason string
}

// Error names the field or option, the value and what is wrong with it,
// and points at the grammar rather than repeating it.
func (e *ProfileError) Error() string {
	what := e.Reason
	if e.Field != "" {
		what = e.Field + " " + e.Reason
	}
	see := "want " + ProfileGrammar + ", e.g. 80:10 or 80:10:1"
	if strings.HasPrefix(e.Field, "option") || strings.Contains(e.Field, ".") || e.Field == "delay" {
		see = "see shapedlink.OptionsGrammar"
	}
	return fmt.Sprintf("shapedlink: profile %q: %s; %s", e.Input, what, see)
}

// Direction returns direction d of p with every setting resolved. Its
// limit is the first of: its limit option; the short form's @limit_pkts;
// the discipline's default; DefaultLimit of its own rate and twice its
// delay when either differs from the short form; the short form's.
func (p Profile) Direction(d Dir) Direction {
	o := p.opts(d)
	dir := Direction{Delay: p.RTT / 2, RateMbit: p.RateMbit, LossPct: p.LossPct, Limit: p.Limit}
	o.Apply(&dir)
	switch {
	case o.Has("limit"):
	case p.Limit != DefaultLimit(p.RateMbit, p.RTT):
		// The short form named a limit: it holds for both directions.
	case dir.Queue.Managed():
		dir.Limit = DefaultQueueLimit(dir.Queue.Kind)
	case o.Has("delay") || o.Has("rate"):
		dir.Limit = DefaultLimit(dir.RateMbit, 2*dir.Delay)
	}
	return dir
}

// RoundTrip is the sum of the two directions' delays: RTT for a profile
// without delay options.
func (p Profile) RoundTrip() time.Duration {
	return p.Direction(Down).Delay + p.Direction(Up).Delay
}

// Symmetric reports whether p has no per-direction options: both
// directions are exactly what the short form says.
func (p Profile) Symmetric() bool { return p.Down.IsZero() && p.Up.IsZero() }

func (p Profile) opts(d Dir) DirOptions {
	if d == Up {
		return p.Up
	}
	return p.Down
}

// Marks reports whether a direction of p marks CE rather than drops
// (a queue discipline with ecn=on).
func (p Profile) Marks() bool {
	for _, d := range []Dir{Down, Up} {
		if q := p.Direction(d).Queue; q.Managed() && q.ECN {
			return true
		}
	}
	return false
}

// optionsString is the options part of String: ",key=value" for each
// setting, without a direction where both directions have it with the
// same value, in OptionKeys' order, down before up.
func (p Profile) optionsString() string {
	var b strings.Builder
	for _, key := range linkspec.Keys() {
		dv, dok := p.Down.Value(key)
		uv, uok := p.Up.Value(key)
		switch {
		case dok && uok && dv == uv:
			fmt.Fprintf(&b, ",%s=%s", key, dv)
		default:
			if dok {
				fmt.Fprintf(&b, ",down.%s=%s", key, dv)
			}
			if uok {
				fmt.Fprintf(&b, ",up.%s=%s", key, uv)
			}
		}
	}
	return b.String()
}
