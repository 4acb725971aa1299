package shapedlink

import (
	"cmp"
	"errors"
	"fmt"
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
		v, err := parsePct(part)
		if err != nil {
			return GE{}, fmt.Errorf("ge %s %v", names[i], err)
		}
		*dst[i] = v
	}
	return g, nil
}

// OptionsGrammar is the form of the options that may follow the short
// form, each after a comma. A value in ms may end in "ms" and a
// percentage in "%"; the package doc says what each key does.
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
			if err := o.set(key, val); err != nil {
				return fail(err.Error())
			}
		}
	}
	return nil
}

// set applies one option's value to o.
func (o *DirOptions) set(key, val string) error {
	var err error
	switch key {
	case "delay":
		if o.Delay, err = parseMs(val); err != nil {
			return fmt.Errorf("%v; delay is the one-way delay in ms", err)
		}
		if o.Delay > MaxRTT {
			return fmt.Errorf("%q is more than %d ms", val, MaxRTT.Milliseconds())
		}
		o.HasDelay = true
	case "jitter":
		return o.setJitter(val)
	case "rate":
		o.RateMbit, err = parseRate(val)
		o.HasRate = true
	case "loss":
		return o.setLoss(val)
	case "limit", "flows", "quantum":
		return o.setCount(key, val)
	case "dup":
		o.DupPct, o.DupCorr, err = pctCorrOf(val, "pct or pct/correlation_pct")
		o.HasDup = true
	case "reorder":
		return o.setReorder(val)
	case "qdisc":
		switch val {
		case "fifo":
			// netem's own drop-tail: the default, nothing to set.
		case "codel", "fq_codel":
			o.Queue.Kind, o.HasQueue = val, true
		default:
			return fmt.Errorf("names %q; the queue disciplines are fifo (netem's drop-tail, the default), codel and fq_codel", val)
		}
	case "target", "interval":
		d, err := parseMs(val)
		if err != nil || d < time.Microsecond || d > MaxRTT {
			return fmt.Errorf("%q is not a whole number of microseconds in ms between 0.001 and %d", val, MaxRTT.Milliseconds())
		}
		if key == "target" {
			o.Queue.Target = d
		} else {
			o.Queue.Interval = d
		}
		o.HasQueue = true
	case "ecn":
		switch val {
		case "on":
			o.Queue.ECN, o.HasQueue = true, true
		case "off":
		default:
			return fmt.Errorf("is %q; ecn is on or off", val)
		}
	case "schedule", "trace":
		return o.setTimeVarying(key, val)
	default:
		return fmt.Errorf("has unknown key %q; the keys are delay, jitter, rate, loss, limit, dup, reorder, qdisc, target, interval, flows, quantum, ecn, schedule and trace (each may follow down. or up.)", key)
	}
	return err
}

// setJitter reads ms[/distribution[/correlation_pct]].
func (o *DirOptions) setJitter(val string) error {
	parts := strings.Split(val, "/")
	if len(parts) > 3 {
		return fmt.Errorf("%q has %d parts; want ms, ms/distribution or ms/distribution/correlation_pct", val, len(parts))
	}
	j, err := parseMs(parts[0])
	if err != nil {
		return fmt.Errorf("%v; jitter is the spread either side of the delay in ms, or the standard deviation with a distribution", err)
	}
	if j > maxJitterMs*time.Millisecond {
		return fmt.Errorf("%q is more than %d ms (netem keeps the jitter in 32-bit nanoseconds)", parts[0], maxJitterMs)
	}
	o.Jitter, o.JitterDist, o.JitterCorr, o.HasJitter = j, "", 0, true
	if len(parts) > 1 {
		switch parts[1] {
		case "uniform":
		case "normal", "pareto", "paretonormal":
			o.JitterDist = parts[1]
		default:
			return fmt.Errorf("names distribution %q; the distributions are uniform (the default), normal, pareto and paretonormal", parts[1])
		}
	}
	if len(parts) > 2 {
		if o.JitterCorr, err = parsePct(parts[2]); err != nil {
			return fmt.Errorf("correlation %v", err)
		}
	}
	return nil
}

// setLoss reads pct[/correlation_pct] or ge:p/r[/1-h[/1-k]].
func (o *DirOptions) setLoss(val string) error {
	if ge, ok := strings.CutPrefix(val, "ge:"); ok {
		g, err := parseGE(ge)
		if err != nil {
			return err
		}
		o.GE, o.HasGE = g, true
		return nil
	}
	var err error
	o.LossPct, o.LossCorr, err = pctCorrOf(val, "pct or pct/correlation_pct, or ge:p/r[/1-h[/1-k]]")
	o.HasLoss = true
	return err
}

// setReorder reads pct[/correlation_pct[/gap]].
func (o *DirOptions) setReorder(val string) error {
	parts := strings.Split(val, "/")
	if len(parts) > 3 {
		return fmt.Errorf("%q has %d parts; want pct, pct/correlation_pct or pct/correlation_pct/gap", val, len(parts))
	}
	var err error
	if o.ReorderPct, o.ReorderCorr, err = pctCorr(parts[:min(len(parts), 2)]); err != nil {
		return err
	}
	o.ReorderGap, o.HasReorder = 0, true
	if len(parts) > 2 {
		n, err := strconv.Atoi(parts[2])
		if err != nil || !isDigits(parts[2]) || n < 1 {
			return fmt.Errorf("gap %q is not a whole number of packets of at least 1", parts[2])
		}
		if n > 1 {
			o.ReorderGap = n
		}
	}
	return nil
}

// pctCorrOf reads pct or pct/correlation_pct; form names the accepted
// forms for the error.
func pctCorrOf(val, form string) (pct, corr float64, err error) {
	parts := strings.Split(val, "/")
	if len(parts) > 2 {
		return 0, 0, fmt.Errorf("%q has %d parts; want %s", val, len(parts), form)
	}
	return pctCorr(parts)
}

// pctCorr reads parts[0] as a percentage and parts[1], when there, as its
// correlation.
func pctCorr(parts []string) (pct, corr float64, err error) {
	if pct, err = parsePct(parts[0]); err != nil {
		return 0, 0, err
	}
	if len(parts) > 1 {
		if corr, err = parsePct(parts[1]); err != nil {
			return 0, 0, fmt.Errorf("correlation %v", err)
		}
	}
	return pct, corr, nil
}

// setCount reads the whole-number keys: limit, flows and quantum.
func (o *DirOptions) setCount(key, val string) error {
	n, err := strconv.Atoi(val)
	if err != nil || !isDigits(val) {
		return fmt.Errorf("%q is not a whole number", val)
	}
	switch key {
	case "limit":
		o.Limit, o.HasLimit = n, true // Validate names the range, with the direction
		return nil
	case "flows":
		if n < 1 || n > 65536 {
			return fmt.Errorf("%q is not a whole number between 1 and 65536", val)
		}
		o.Queue.Flows = n
	default:
		if n < 256 || n > 1<<20 {
			return fmt.Errorf("%q is not a whole number between 256 and %d", val, 1<<20)
		}
		o.Queue.Quantum = n
	}
	o.HasQueue = true
	return nil
}

// setTimeVarying reads a schedule or trace spec. It is loaded now, so a
// bad one is refused with the profile; the link reads it again when built.
func (o *DirOptions) setTimeVarying(key, val string) error {
	var err error
	if key == "schedule" {
		_, err = LoadSchedule(val)
		o.Schedule = val
	} else {
		_, err = LoadTrace(val)
		o.Trace = val
	}
	if err != nil {
		return errors.New(strings.TrimPrefix(err.Error(), "shapedlink: "))
	}
	return nil
}

// corrSuffix is "/corr" when a correlation is set.
func corrSuffix(corr float64) string {
	if corr == 0 {
		return ""
	}
	return "/" + fmtNum(corr)
}
