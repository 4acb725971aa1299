package shapedlink

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Dir names one direction of a link.
type Dir int

const (
	// Down is server to client (the server end's egress).
	Down Dir = iota
	// Up is client to server (the client end's egress).
	Up
)

func (d Dir) String() string {
	if d == Up {
		return "up"
	}
	return "down"
}

// Direction is one direction of a link with every setting resolved: what
// a backend applies to it.
type Direction struct {
	Delay time.Duration // one-way delay
	// Jitter spreads each packet's delay uniformly over [Delay-Jitter,
	// Delay+Jitter), netem's "delay D J" with its default distribution.
	// With a rate (every profile has one) a packet never leaves before the
	// one ahead of it, as in netem, so jitter does not reorder.
	Jitter   time.Duration
	RateMbit float64 // Mbit/s (10^6 bit/s)
	LossPct  float64 // independent random loss, percent (0 with GE)
	Limit    int     // packet limit, counted as netem counts it
	// GE is the Gilbert-Elliott loss model, when HasGE; it replaces the
	// independent loss.
	GE    GE
	HasGE bool
}

// GE is netem's Gilbert-Elliott loss model (tc-netem's "loss gemodel p r
// 1-h 1-k"), each parameter in percent: from the good state the link
// moves to the bad one with probability P per packet and loses a packet
// with probability OneMinusK; from the bad state it moves back with
// probability R and loses with probability OneMinusH. With OneMinusH 100
// and OneMinusK 0 (the defaults) the mean loss is P/(P+R) and a burst of
// losses lasts 100/R packets on average: 1% loss in bursts of 3 is
// ge:0.3367/33.33, in bursts of 10 ge:0.101/10.
type GE struct {
	P, R, OneMinusH, OneMinusK float64
}

// MeanLoss is the long-run share of packets lost, in percent.
func (g GE) MeanLoss() float64 {
	if g.P+g.R == 0 {
		return g.OneMinusK
	}
	bad := g.P / (g.P + g.R)
	return (1-bad)*g.OneMinusK + bad*g.OneMinusH
}

func (g GE) String() string {
	s := "ge:" + fmtNum(g.P) + "/" + fmtNum(g.R)
	if g.OneMinusH != 100 || g.OneMinusK != 0 {
		s += "/" + fmtNum(g.OneMinusH)
	}
	if g.OneMinusK != 0 {
		s += "/" + fmtNum(g.OneMinusK)
	}
	return s
}

// parseGE reads p/r[/1-h[/1-k]] (after "ge:"), percentages.
func parseGE(s string) (GE, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 4 {
		return GE{}, fmt.Errorf("ge:%s has %d parts; want ge:p/r, ge:p/r/1-h or ge:p/r/1-h/1-k, in percent", s, len(parts))
	}
	g := GE{OneMinusH: 100}
	dst := []*float64{&g.P, &g.R, &g.OneMinusH, &g.OneMinusK}
	names := []string{"p", "r", "1-h", "1-k"}
	for i, part := range parts {
		v, err := parseDecimal(part)
		if err != nil {
			return GE{}, fmt.Errorf("ge %s %q %v", names[i], part, err)
		}
		if v > 100 {
			return GE{}, fmt.Errorf("ge %s %q is more than 100%%", names[i], part)
		}
		*dst[i] = v
	}
	return g, nil
}

// DirOptions are the settings of one direction that differ from the base
// profile (the short form rtt_ms:rate_mbit[:loss_pct][@limit_pkts]). A
// value applies only when its Has flag is set; the zero DirOptions means "as
// the base". They are plain values, so a Profile stays comparable.
type DirOptions struct {
	Delay    time.Duration // one-way delay (the base gives each direction RTT/2)
	Jitter   time.Duration
	RateMbit float64
	LossPct  float64
	Limit    int
	GE       GE // replaces the loss when HasGE

	HasDelay, HasJitter, HasRate, HasLoss, HasLimit, HasGE bool
}

// IsZero reports whether o changes nothing.
func (o DirOptions) IsZero() bool {
	return !o.HasDelay && !o.HasJitter && !o.HasRate && !o.HasLoss && !o.HasLimit && !o.HasGE
}

// OptionsGrammar is the form of the options that may follow the short
// form, each after a comma.
const OptionsGrammar = "[down.|up.]{delay=one_way_ms|jitter=ms|rate=mbit|loss=pct|loss=ge:p/r[/1-h[/1-k]]|limit=pkts}"

// option keys in the order String writes them.
var optionKeys = [...]string{"delay", "jitter", "rate", "loss", "limit"}

// Direction returns direction d of p with every setting resolved. A
// direction's limit is, in order: its own limit option; the base's limit
// when the short form names one (@limit_pkts); DefaultLimit of the
// direction's own rate and twice its own delay when either differs from
// the base; and otherwise the base's limit.
func (p Profile) Direction(d Dir) Direction {
	o := p.opts(d)
	dir := Direction{Delay: p.RTT / 2, RateMbit: p.RateMbit, LossPct: p.LossPct, Limit: p.Limit}
	if o.HasDelay {
		dir.Delay = o.Delay
	}
	if o.HasJitter {
		dir.Jitter = o.Jitter
	}
	if o.HasRate {
		dir.RateMbit = o.RateMbit
	}
	if o.HasLoss {
		dir.LossPct = o.LossPct
	}
	if o.HasGE {
		dir.GE, dir.HasGE, dir.LossPct = o.GE, true, 0
	}
	switch {
	case o.HasLimit:
		dir.Limit = o.Limit
	case p.Limit != DefaultLimit(p.RateMbit, p.RTT):
		// The short form named a limit: it holds for both directions.
	case o.HasDelay || o.HasRate:
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

// optionsString is the options part of String: ",key=value" for each
// setting, without a direction where both directions have it with the
// same value, in a fixed order (keys as optionKeys, down before up).
func (p Profile) optionsString() string {
	var b strings.Builder
	for _, key := range optionKeys {
		dv, dok := p.Down.value(key)
		uv, uok := p.Up.value(key)
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

// value is key's value as String writes it, if set.
func (o DirOptions) value(key string) (string, bool) {
	switch key {
	case "delay":
		return fmtNum(float64(o.Delay) / 1e6), o.HasDelay
	case "jitter":
		return fmtNum(float64(o.Jitter) / 1e6), o.HasJitter
	case "rate":
		return fmtNum(o.RateMbit), o.HasRate
	case "loss":
		if o.HasGE {
			return o.GE.String(), true
		}
		return fmtNum(o.LossPct), o.HasLoss
	case "limit":
		return strconv.Itoa(o.Limit), o.HasLimit
	}
	return "", false
}

// parseOptions applies the comma-separated options in s to p.
func parseOptions(input string, p *Profile, s string) error {
	seen := map[string]bool{}
	for _, opt := range strings.Split(s, ",") {
		fail := func(reason string) error {
			return &ProfileError{Input: input, Field: "option " + strconv.Quote(opt), Reason: reason}
		}
		name, val, ok := strings.Cut(opt, "=")
		if !ok || name == "" {
			return fail("is not key=value")
		}
		dirs := []Dir{Down, Up}
		key := name
		if d, k, ok := strings.Cut(name, "."); ok {
			switch d {
			case "down":
				dirs = []Dir{Down}
			case "up":
				dirs = []Dir{Up}
			default:
				return fail(fmt.Sprintf("names direction %q; the directions are down (server to client) and up (client to server)", d))
			}
			key = k
		}
		for _, d := range dirs {
			if seen[d.String()+"."+key] {
				return fail(fmt.Sprintf("sets %s for the %s direction twice", key, d))
			}
			seen[d.String()+"."+key] = true
		}
		for _, d := range dirs {
			o := &p.Down
			if d == Up {
				o = &p.Up
			}
			switch key {
			case "delay":
				v, err := parseDecimal(val)
				if err != nil {
					return fail(fmt.Sprintf("%q %v (one-way delay in ms)", val, err))
				}
				if v > float64(MaxRTT.Milliseconds()) {
					return fail(fmt.Sprintf("%q is more than %d ms", val, MaxRTT.Milliseconds()))
				}
				o.Delay, o.HasDelay = time.Duration(math.Round(v*1e6)), true
			case "jitter":
				v, err := parseDecimal(val)
				if err != nil {
					return fail(fmt.Sprintf("%q %v (ms, spread uniformly either side of the delay; distributions and correlation are not built yet)", val, err))
				}
				if v > float64(MaxRTT.Milliseconds()) {
					return fail(fmt.Sprintf("%q is more than %d ms", val, MaxRTT.Milliseconds()))
				}
				o.Jitter, o.HasJitter = time.Duration(math.Round(v*1e6)), true
			case "rate":
				v, err := parseDecimal(val)
				if err != nil {
					return fail(fmt.Sprintf("%q %v (Mbit/s)", val, err))
				}
				o.RateMbit, o.HasRate = v, true
			case "loss":
				if ge, ok := strings.CutPrefix(val, "ge:"); ok {
					g, err := parseGE(ge)
					if err != nil {
						return fail(err.Error())
					}
					o.GE, o.HasGE = g, true
					continue
				}
				v, err := parseDecimal(val)
				if err != nil {
					return fail(fmt.Sprintf("%q %v (percent, or ge:p/r[/1-h[/1-k]])", val, err))
				}
				o.LossPct, o.HasLoss = v, true
			case "limit":
				n, err := strconv.Atoi(val)
				if err != nil || !isDigits(val) {
					return fail(fmt.Sprintf("%q is not a whole number of packets", val))
				}
				o.Limit, o.HasLimit = n, true
			default:
				return fail(fmt.Sprintf("has unknown key %q; the keys are delay, jitter, rate, loss and limit, each optionally after down. or up.", key))
			}
		}
	}
	return nil
}

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
		}
	}
	if p.RoundTrip() <= 0 {
		return &ProfileError{Input: p.String(), Field: "delay", Reason: "leaves a round trip of zero; at least one direction needs a delay"}
	}
	return nil
}
