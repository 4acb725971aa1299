package shapedlink

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// NewProfile returns a validated profile with the default limit.
func NewProfile(rtt time.Duration, rateMbit, lossPct float64) (Profile, error) {
	p := Profile{RTT: rtt, RateMbit: rateMbit, LossPct: lossPct}
	p.Limit = DefaultLimit(rateMbit, rtt)
	return p, p.Validate()
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
