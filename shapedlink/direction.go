package shapedlink

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/disttable"
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
	// Jitter varies each packet's delay as netem's "delay D J [CORR]
	// [distribution NAME]" does: with no JitterDist uniformly over
	// [Delay-Jitter, Delay+Jitter); with "normal", "pareto" or
	// "paretonormal" as Delay plus Jitter times a draw from that table
	// (Jitter is then the standard deviation; the tables stop at 4
	// sigma). With a rate (every profile has one) a packet never leaves
	// before the one ahead of it, as in netem, so jitter does not
	// reorder.
	Jitter     time.Duration
	JitterDist string  // "" (uniform), "normal", "pareto", "paretonormal"
	JitterCorr float64 // percent; netem's delay correlation
	RateMbit   float64 // Mbit/s (10^6 bit/s)
	LossPct    float64 // independent random loss, percent (0 with GE)
	LossCorr   float64 // percent; netem's loss correlation
	Limit      int     // packet limit, counted as netem counts it
	// GE is the Gilbert-Elliott loss model, when HasGE; it replaces the
	// independent loss.
	GE    GE
	HasGE bool
	// DupPct duplicates packets (netem's "duplicate PCT [CORR]"); the
	// copy may itself be lost.
	DupPct, DupCorr float64
	// ReorderPct sends packets at once, ahead of the delayed ones
	// (netem's "reorder PCT [CORR] gap G"): after at least ReorderGap-1
	// packets delayed normally, each with probability ReorderPct.
	ReorderPct, ReorderCorr float64
	ReorderGap              int
	// Queue is the queue discipline for the packets waiting for the rate
	// (the qdisc option); its zero value is netem's own drop-tail, whose
	// Limit counts the packets in the delay line too. With a discipline,
	// Limit is the discipline's packet limit.
	Queue Queue
	// Schedule and Trace are the schedule and trace specs (LoadSchedule,
	// LoadTrace) as the profile names them, or "": timed changes applied
	// while the link runs, and a Mahimahi trace in place of the rate.
	Schedule, Trace string
}

// Queue is a queue discipline at a direction's bottleneck, as
// tc-codel(8) and tc-fq_codel(8) describe them. Zero fields take the
// kernel's defaults (target 5 ms, interval 100 ms, 1024 flows, quantum
// 1514 bytes); ECN is off unless asked for, for both.
type Queue struct {
	Kind     string // "" (netem's drop-tail), "codel" or "fq_codel"
	Target   time.Duration
	Interval time.Duration
	Flows    int // fq_codel only
	Quantum  int // bytes, fq_codel only
	ECN      bool
}

// DefaultQueueLimit is the kernel's default packet limit of a queue
// discipline: 1000 for codel, 10240 for fq_codel.
func DefaultQueueLimit(kind string) int {
	if kind == "fq_codel" {
		return 10240
	}
	return 1000
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
	Delay       time.Duration // one-way delay (the base gives each direction RTT/2)
	Jitter      time.Duration
	JitterDist  string  // set with Jitter; "" is uniform
	JitterCorr  float64 // set with Jitter
	RateMbit    float64
	LossPct     float64
	LossCorr    float64 // set with LossPct
	Limit       int
	GE          GE // replaces the loss when HasGE
	DupPct      float64
	DupCorr     float64
	ReorderPct  float64
	ReorderCorr float64
	ReorderGap  int

	Queue Queue // the qdisc, target, interval, flows, quantum and ecn keys

	Schedule string // a schedule spec (LoadSchedule); set when not ""
	Trace    string // a trace spec (LoadTrace); set when not ""

	HasDelay, HasJitter, HasRate, HasLoss, HasLimit, HasGE, HasDup, HasReorder, HasQueue bool
}

// IsZero reports whether o changes nothing.
func (o DirOptions) IsZero() bool {
	return !o.HasDelay && !o.HasJitter && !o.HasRate && !o.HasLoss && !o.HasLimit && !o.HasGE && !o.HasDup && !o.HasReorder && !o.HasQueue && o.Schedule == "" && o.Trace == ""
}

// OptionsGrammar is the form of the options that may follow the short
// form, each after a comma.
const OptionsGrammar = "[down.|up.]{delay=one_way_ms|jitter=ms[/uniform|normal|pareto|paretonormal[/corr_pct]]|rate=mbit|loss=pct[/corr_pct]|loss=ge:p/r[/1-h[/1-k]]|limit=pkts|dup=pct[/corr_pct]|reorder=pct[/corr_pct[/gap]]|qdisc=fifo|codel|fq_codel|target=ms|interval=ms|flows=n|quantum=bytes|ecn=on|off|schedule=spec|trace=spec}"

// option keys in the order String writes them.
var optionKeys = [...]string{"delay", "jitter", "rate", "loss", "limit", "dup", "reorder", "qdisc", "target", "interval", "flows", "quantum", "ecn", "schedule", "trace"}

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
		dir.Jitter, dir.JitterDist, dir.JitterCorr = o.Jitter, o.JitterDist, o.JitterCorr
	}
	if o.HasDup {
		dir.DupPct, dir.DupCorr = o.DupPct, o.DupCorr
	}
	if o.HasReorder {
		dir.ReorderPct, dir.ReorderCorr, dir.ReorderGap = o.ReorderPct, o.ReorderCorr, o.ReorderGap
	}
	if o.HasQueue {
		dir.Queue = o.Queue
	}
	dir.Schedule, dir.Trace = o.Schedule, o.Trace
	if o.HasRate {
		dir.RateMbit = o.RateMbit
	}
	if o.HasLoss {
		dir.LossPct, dir.LossCorr = o.LossPct, o.LossCorr
	}
	if o.HasGE {
		dir.GE, dir.HasGE, dir.LossPct = o.GE, true, 0
	}
	switch {
	case o.HasLimit:
		dir.Limit = o.Limit
	case p.Limit != DefaultLimit(p.RateMbit, p.RTT):
		// The short form named a limit: it holds for both directions.
	case dir.Queue.Kind != "":
		dir.Limit = DefaultQueueLimit(dir.Queue.Kind)
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
// can build it. netem builds a queue discipline as netem (delay, loss),
// then tbf (the rate), then the discipline (netemqdisc_linux.go), which
// puts the delay line ahead of the queue: the same timing for a fixed
// delay, but jittered frames would overtake each other before reaching
// the queue, so jitter beside a discipline is the emulator's alone.
func (p Profile) emulatorOnly() string {
	tv, _ := loadTimeVarying(p) // New has loaded them already; a spec that fails to load is refused there
	return p.emulatorOnlyWith(tv)
}

// emulatorOnlyWith is emulatorOnly with p's schedules and traces loaded.
func (p Profile) emulatorOnlyWith(tv timeVarying) string {
	for _, d := range []Dir{Down, Up} {
		pd := p.Direction(d)
		if pd.Trace != "" {
			return fmt.Sprintf("the %s direction's rate is a trace (%s), which netem cannot follow", d, pd.Trace)
		}
		if pd.Schedule != "" {
			if s := tv.sched[d]; s != nil && s.Holds() {
				return fmt.Sprintf("the %s direction's schedule (%s) holds packets during a blackout, which netem cannot do", d, pd.Schedule)
			}
		}
		if k := pd.Queue.Kind; k != "" && pd.Jitter > 0 {
			return fmt.Sprintf("the %s direction asks for jitter beside qdisc=%s; with netem the delay line would come before the queue and jittered frames would reach it out of order, so shapedlink builds this only in the emulator", d, k)
		}
	}
	return ""
}

// Marks reports whether a direction of p marks ECN-capable packets with
// CE (a queue discipline with ecn=on) rather than dropping them.
func (p Profile) Marks() bool {
	for _, d := range []Dir{Down, Up} {
		if q := p.Direction(d).Queue; q.Kind != "" && q.ECN {
			return true
		}
	}
	return false
}

// random reports whether d draws random numbers: loss of either model,
// jitter, duplication or reordering.
func (d Direction) random() bool {
	return d.LossPct > 0 || d.HasGE || d.Jitter > 0 || d.DupPct > 0 || d.ReorderPct > 0
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
