package shapedlink

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

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

// OptionsGrammar is the form of the options that may follow the short
// form, each after a comma.
const OptionsGrammar = "[down.|up.]{delay=one_way_ms|jitter=ms[/uniform|normal|pareto|paretonormal[/corr_pct]]|rate=mbit|loss=pct[/corr_pct]|loss=ge:p/r[/1-h[/1-k]]|limit=pkts|dup=pct[/corr_pct]|reorder=pct[/corr_pct[/gap]]|qdisc=fifo|codel|fq_codel|target=ms|interval=ms|flows=n|quantum=bytes|ecn=on|off|schedule=spec|trace=spec}"

// option keys in the order String writes them.
var optionKeys = [...]string{"delay", "jitter", "rate", "loss", "limit", "dup", "reorder", "qdisc", "target", "interval", "flows", "quantum", "ecn", "schedule", "trace"}

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
		v := fmtNum(float64(o.Jitter) / 1e6)
		switch {
		case o.JitterCorr != 0:
			v += "/" + cmp.Or(o.JitterDist, "uniform") + "/" + fmtNum(o.JitterCorr)
		case o.JitterDist != "":
			v += "/" + o.JitterDist
		}
		return v, o.HasJitter
	case "rate":
		return fmtNum(o.RateMbit), o.HasRate
	case "loss":
		if o.HasGE {
			return o.GE.String(), true
		}
		return fmtNum(o.LossPct) + corrSuffix(o.LossCorr), o.HasLoss
	case "limit":
		return strconv.Itoa(o.Limit), o.HasLimit
	case "dup":
		return fmtNum(o.DupPct) + corrSuffix(o.DupCorr), o.HasDup
	case "reorder":
		v := fmtNum(o.ReorderPct)
		if o.ReorderGap > 1 {
			v += "/" + fmtNum(o.ReorderCorr) + "/" + strconv.Itoa(o.ReorderGap)
		} else {
			v += corrSuffix(o.ReorderCorr)
		}
		return v, o.HasReorder
	case "qdisc":
		return o.Queue.Kind, o.HasQueue && o.Queue.Kind != ""
	case "target":
		return fmtNum(float64(o.Queue.Target) / 1e6), o.Queue.Target != 0
	case "interval":
		return fmtNum(float64(o.Queue.Interval) / 1e6), o.Queue.Interval != 0
	case "flows":
		return strconv.Itoa(o.Queue.Flows), o.Queue.Flows != 0
	case "quantum":
		return strconv.Itoa(o.Queue.Quantum), o.Queue.Quantum != 0
	case "ecn":
		return "on", o.Queue.ECN
	case "schedule":
		return o.Schedule, o.Schedule != ""
	case "trace":
		return o.Trace, o.Trace != ""
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
				parts := strings.Split(val, "/")
				if len(parts) > 3 {
					return fail(fmt.Sprintf("%q has %d parts; want ms, ms/distribution or ms/distribution/correlation_pct", val, len(parts)))
				}
				v, err := parseDecimal(parts[0])
				if err != nil {
					return fail(fmt.Sprintf("%q %v (ms: the spread either side of the delay, or the standard deviation with a distribution)", parts[0], err))
				}
				if v > maxJitterMs {
					return fail(fmt.Sprintf("%q is more than %d ms (netem keeps the jitter in 32-bit nanoseconds)", parts[0], maxJitterMs))
				}
				o.Jitter, o.JitterDist, o.JitterCorr, o.HasJitter = time.Duration(math.Round(v*1e6)), "", 0, true
				if len(parts) > 1 {
					switch parts[1] {
					case "uniform":
					case "normal", "pareto", "paretonormal":
						o.JitterDist = parts[1]
					default:
						return fail(fmt.Sprintf("names distribution %q; the distributions are uniform (the default), normal, pareto and paretonormal", parts[1]))
					}
				}
				if len(parts) > 2 {
					if o.JitterCorr, err = parsePct(parts[2]); err != nil {
						return fail("correlation " + err.Error())
					}
				}
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
				pct, corr, ok := strings.Cut(val, "/")
				v, err := parseDecimal(pct)
				if err != nil {
					return fail(fmt.Sprintf("%q %v (percent[/correlation_pct], or ge:p/r[/1-h[/1-k]])", val, err))
				}
				o.LossPct, o.LossCorr, o.HasLoss = v, 0, true
				if ok {
					if o.LossCorr, err = parsePct(corr); err != nil {
						return fail("correlation " + err.Error())
					}
				}
			case "dup":
				parts := strings.Split(val, "/")
				if len(parts) > 2 {
					return fail(fmt.Sprintf("%q has %d parts; want pct or pct/correlation_pct", val, len(parts)))
				}
				v, err := parsePct(parts[0])
				if err != nil {
					return fail(err.Error())
				}
				o.DupPct, o.DupCorr, o.HasDup = v, 0, true
				if len(parts) == 2 {
					if o.DupCorr, err = parsePct(parts[1]); err != nil {
						return fail("correlation " + err.Error())
					}
				}
			case "reorder":
				parts := strings.Split(val, "/")
				if len(parts) > 3 {
					return fail(fmt.Sprintf("%q has %d parts; want pct, pct/correlation_pct or pct/correlation_pct/gap", val, len(parts)))
				}
				v, err := parsePct(parts[0])
				if err != nil {
					return fail(err.Error())
				}
				o.ReorderPct, o.ReorderCorr, o.ReorderGap, o.HasReorder = v, 0, 0, true
				if len(parts) > 1 {
					if o.ReorderCorr, err = parsePct(parts[1]); err != nil {
						return fail("correlation " + err.Error())
					}
				}
				if len(parts) > 2 {
					n, err := strconv.Atoi(parts[2])
					if err != nil || !isDigits(parts[2]) || n < 1 {
						return fail(fmt.Sprintf("gap %q is not a whole number of packets of at least 1", parts[2]))
					}
					if n > 1 {
						o.ReorderGap = n
					}
				}
			case "limit":
				n, err := strconv.Atoi(val)
				if err != nil || !isDigits(val) {
					return fail(fmt.Sprintf("%q is not a whole number of packets", val))
				}
				o.Limit, o.HasLimit = n, true
			case "qdisc":
				switch val {
				case "fifo":
					// netem's own drop-tail: the default, nothing to set.
				case "codel", "fq_codel":
					o.Queue.Kind, o.HasQueue = val, true
				default:
					return fail(fmt.Sprintf("names %q; the queue disciplines are fifo (netem's drop-tail, the default), codel and fq_codel", val))
				}
			case "target", "interval":
				v, err := parseDecimal(val)
				if err != nil || v < 0.001 || v > 60000 {
					return fail(fmt.Sprintf("%q is not a time in ms between 0.001 and 60000", val))
				}
				d := time.Duration(math.Round(v * 1e6))
				if key == "target" {
					o.Queue.Target = d
				} else {
					o.Queue.Interval = d
				}
				o.HasQueue = true
			case "flows", "quantum":
				n, err := strconv.Atoi(val)
				lo, hi := 1, 65536
				if key == "quantum" {
					lo, hi = 256, 1<<20
				}
				if err != nil || !isDigits(val) || n < lo || n > hi {
					return fail(fmt.Sprintf("%q is not a whole number between %d and %d", val, lo, hi))
				}
				if key == "flows" {
					o.Queue.Flows = n
				} else {
					o.Queue.Quantum = n
				}
				o.HasQueue = true
			case "ecn":
				switch val {
				case "on":
					o.Queue.ECN, o.HasQueue = true, true
				case "off":
				default:
					return fail(fmt.Sprintf("is %q; ecn is on or off", val))
				}
			case "schedule":
				// Read (or generated) now, so a bad one is refused with
				// the profile; the link reads it again when built.
				if _, err := LoadSchedule(val); err != nil {
					return fail(strings.TrimPrefix(err.Error(), "shapedlink: "))
				}
				o.Schedule = val
			case "trace":
				if _, err := LoadTrace(val); err != nil {
					return fail(strings.TrimPrefix(err.Error(), "shapedlink: "))
				}
				o.Trace = val
			default:
				return fail(fmt.Sprintf("has unknown key %q; the keys are delay, jitter, rate, loss, limit, dup, reorder, qdisc, target, interval, flows, quantum, ecn, schedule and trace, each optionally after down. or up.", key))
			}
		}
	}
	return nil
}

// maxJitterMs is the largest jitter accepted: netem keeps it, as sigma, in
// a signed 32-bit count of nanoseconds.
const maxJitterMs = 2147

// parsePct reads a percentage between 0 and 100, with an optional "%".
func parsePct(s string) (float64, error) {
	v, err := parseDecimal(strings.TrimSuffix(s, "%"))
	if err != nil {
		return 0, fmt.Errorf("%q %v (percent)", s, err)
	}
	if v > 100 {
		return 0, fmt.Errorf("%q is more than 100%%", s)
	}
	return v, nil
}

// corrSuffix is "/corr" when a correlation is set.
func corrSuffix(corr float64) string {
	if corr == 0 {
		return ""
	}
	return "/" + fmtNum(corr)
}

// emulatorOnly says why p needs the emulator backend, or "" when netem
