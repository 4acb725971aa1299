package shapedlink

import (
	"errors"
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

// NewProfile returns a validated profile with the default limit.
func NewProfile(rtt time.Duration, rateMbit, lossPct float64) (Profile, error) {
	p := Profile{RTT: rtt, RateMbit: rateMbit, LossPct: lossPct}
	p.Limit = DefaultLimit(rateMbit, rtt)
	return p, p.Validate()
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

// ErrEmptyProfiles is returned by ParseProfiles for a list with no profiles.
var ErrEmptyProfiles = errors.New("shapedlink: no profiles given; want a space-separated list such as \"80:10 80:10:1 150:2:0.5\"")

// ParseProfile parses rtt_ms:rate_mbit[:loss_pct][@limit_pkts][,option...],
// for example "80:10", "80:10:1" or "150:2:0.5" (options: OptionsGrammar).
// Numbers are plain decimals; a time may end in "ms" and a percentage in
// "%". The limit defaults to DefaultLimit. A value the backends would not
// apply as written is refused, as is an option another makes meaningless.
func ParseProfile(s string) (Profile, error) {
	short, opts, hasOpts := strings.Cut(s, ",")
	body, limitText, hasLimit := strings.Cut(short, "@")
	fields := strings.Split(body, ":")
	if len(fields) < 2 || len(fields) > 3 {
		return Profile{}, &ProfileError{Input: s, Reason: fmt.Sprintf("has %d colon-separated fields, want 2 or 3", len(fields))}
	}
	fail := func(field, reason string) (Profile, error) {
		return Profile{}, &ProfileError{Input: s, Field: field, Reason: reason}
	}
	var p Profile
	var err error
	if p.RTT, err = linkspec.ParseMs(fields[0]); err != nil {
		return fail("rtt_ms", err.Error())
	}
	if p.RTT <= 0 || p.RTT > MaxRTT {
		return fail("rtt_ms", fmt.Sprintf("%q must be positive and at most %d", fields[0], MaxRTT.Milliseconds()))
	}
	if p.RateMbit, err = linkspec.ParseRate(fields[1]); err != nil {
		return fail("rate_mbit", err.Error())
	}
	if len(fields) == 3 {
		if p.LossPct, err = linkspec.ParsePct(fields[2]); err != nil {
			return fail("loss_pct", err.Error())
		}
	}
	p.Limit = DefaultLimit(p.RateMbit, p.RTT)
	if hasLimit {
		n, err := strconv.Atoi(limitText)
		if err != nil || !linkspec.IsDigits(limitText) {
			return Profile{}, &ProfileError{Input: s, Field: "limit_pkts", Reason: fmt.Sprintf("%q is not a whole number of packets", limitText)}
		}
		p.Limit = n
	}
	if hasOpts {
		if err := parseOptions(s, &p, opts); err != nil {
			return Profile{}, err
		}
	}
	err = p.Validate()
	if err == nil && hasOpts {
		// The schedules and traces against the options beside them.
		_, err = p.load()
	}
	if err != nil {
		var pe *ProfileError
		if errors.As(err, &pe) {
			pe.Input = s
		}
		return Profile{}, err
	}
	return p, nil
}

// ParseProfiles parses a space-separated list of profiles ("80:10 80:10:1").
// Runs of white space are allowed; an empty list is an error.
func ParseProfiles(s string) ([]Profile, error) {
	var out []Profile
	for _, f := range strings.Fields(s) {
		p, err := ParseProfile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, ErrEmptyProfiles
	}
	return out, nil
}
