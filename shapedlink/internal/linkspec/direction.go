package linkspec

import (
	"cmp"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/aqm"
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

// Direction is one direction of a link with every setting resolved: the
// one description of a direction that the profile resolves to, the netem
// encoder writes and the emulator's model runs.
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
	RateMbit   float64 // Mbit/s (10^6 bit/s), a whole number of bytes per second
	LossPct    float64 // independent random loss, percent (0 with GE or FourState)
	LossCorr   float64 // percent; netem's loss correlation
	// GE is the Gilbert-Elliott loss model, when HasGE; it replaces the
	// independent loss.
	GE    GE
	HasGE bool
	// FourState is netem's 4-state loss model, when HasFourState; it
	// replaces the independent loss.
	FourState    FourState
	HasFourState bool
	// DupPct duplicates packets (netem's "duplicate PCT [CORR]"); the
	// copy may itself be lost.
	DupPct, DupCorr float64
	// ReorderPct sends packets at once, ahead of the delayed ones
	// (netem's "reorder PCT [CORR] gap G"): after at least ReorderGap-1
	// packets delayed normally, each with probability ReorderPct.
	ReorderPct, ReorderCorr float64
	ReorderGap              int
	// CorruptPct corrupts packets (netem's "corrupt PCT [CORR]"): a
	// packet that survived the loss has one random bit flipped, in a
	// random byte, once its checksum has been made complete, so the
	// receiver's checksum drops it (a flip in the source MAC address is
	// the harmless exception). A duplicate is copied before and drawn on
	// its own.
	CorruptPct, CorruptCorr float64
	// Limit is the packet limit, counted as netem counts it (the delay
	// line included); with a queue discipline it is the discipline's.
	Limit int
	// Queue is the queue discipline for the packets waiting for the rate
	// (the qdisc option); its zero value is netem's own drop-tail.
	Queue Queue
	// Schedule and Trace are the schedule and trace specs (LoadSchedule,
	// LoadTrace) as the profile names them, or "": timed changes applied
	// while the link runs, and a Mahimahi trace in place of the rate.
	Schedule, Trace string
	// Cross is the bulk traffic beside the session in this direction
	// (the cross option), in the order given.
	Cross []Cross `json:",omitempty"`

	// Changes and SchedulePeriod are the schedule as loaded, this
	// direction's changes only, and TraceMs the trace's opportunities
	// (Trace.Ms); Seed seeds the direction's random draws. A profile's
	// Direction leaves them empty; a link fills them when it loads its
	// schedules and traces and draws its seeds.
	Changes        []Change      `json:",omitempty"`
	SchedulePeriod time.Duration `json:",omitempty"`
	TraceMs        []uint32      `json:",omitempty"`
	Seed           uint64
}

// RateBits is the rate in bits per second (exact: a profile's rates are
// whole bytes per second).
func (d Direction) RateBits() uint64 { return uint64(math.Round(d.RateMbit * 1e6)) }

// HeldLimit is the most packets the direction holds at once, the delay
// line included: the limit, or with a queue discipline (whose limit is
// Limit) room for the discipline's limit and for what the delay line
// holds at the rate (DefaultLimit of the rate and twice the delay).
func (d Direction) HeldLimit() int {
	if !d.Queue.Managed() {
		return d.Limit
	}
	return d.Limit + DefaultLimit(d.RateMbit, 2*d.Delay)
}

// MaxHeld is the largest HeldLimit the direction ever has: its own and
// any its schedule sets.
func (d Direction) MaxHeld() int {
	n := d.HeldLimit()
	for _, c := range d.Changes {
		if c.Set == "limit" {
			n = max(n, int(c.Value))
		}
	}
	return n
}

// Random reports whether d draws random numbers: loss of any model,
// jitter, duplication or reordering.
func (d Direction) Random() bool {
	return d.LossPct > 0 || d.HasGE || d.HasFourState || d.Jitter > 0 || d.DupPct > 0 || d.ReorderPct > 0 || d.CorruptPct > 0
}

// An option is one key of the options that follow a profile's short form
// ([down.|up.]key=value): how its value is read and written, what it
// means, and whether netem can build it. options lists them all; nothing
// else in the module lists option keys.
type option struct {
	Key  string
	Form string // the value's grammar
	Doc  string // what it sets, in a line
	// NotOnNetem says why netem cannot build direction d as this option
	// makes it, as the end of a sentence that begins "the down
	// direction" ("'s rate is a trace ..."), or "" when it can; nil when
	// netem always can.
	NotOnNetem func(d Direction) string

	parse  func(val string, d *Direction) error // reads val into d; no I/O
	load   func(val string) error               // reads what val names (files), when it is set
	format func(d Direction) string             // the value as String writes it; "" records nothing
}

// options are the profile options, in the order Profile.String writes them.
var options = [...]option{
	{Key: "delay", Form: "one_way_ms", Doc: "one-way delay (the short form gives RTT/2)",
		parse: func(v string, d *Direction) error {
			t, err := ParseMs(v)
			if err != nil {
				return fmt.Errorf("%v; delay is the one-way delay in ms", err)
			}
			if t > MaxRTT {
				return fmt.Errorf("%q is more than %d ms", v, MaxRTT.Milliseconds())
			}
			d.Delay = t
			return nil
		},
		format: func(d Direction) string { return FmtNum(float64(d.Delay) / 1e6) }},
	{Key: "jitter", Form: "ms[/uniform|normal|pareto|paretonormal[/corr_pct]]",
		Doc: "netem's delay variation: uniform on delay-ms to delay+ms, or delay plus ms times a draw from the table (ms the standard deviation)",
		NotOnNetem: func(d Direction) string {
			if d.Jitter > 0 && d.Queue.Managed() {
				return fmt.Sprintf(" asks for jitter beside qdisc=%s; with netem the delay line would come before the queue and jittered frames would reach it out of order, so shapedlink builds this only in the emulator", d.Queue.Kind)
			}
			return ""
		},
		parse: parseJitter,
		format: func(d Direction) string {
			v := FmtNum(float64(d.Jitter) / 1e6)
			switch {
			case d.JitterCorr != 0:
				v += "/" + cmp.Or(d.JitterDist, "uniform") + "/" + FmtNum(d.JitterCorr)
			case d.JitterDist != "":
				v += "/" + d.JitterDist
			}
			return v
		}},
	{Key: "rate", Form: "mbit", Doc: "rate in Mbit/s (whole bytes per second)",
		parse: func(v string, d *Direction) (err error) {
			d.RateMbit, err = ParseRate(v)
			return err
		},
		format: func(d Direction) string { return FmtNum(d.RateMbit) }},
	{Key: "loss", Form: "pct[/corr_pct]|ge:p/r[/1-h[/1-k]]|state:p13[/p31[/p32[/p23[/p14]]]]",
		Doc:   "independent (or netem-correlated) loss, netem's Gilbert-Elliott model, or netem's 4-state model (tc's \"loss state\"; omitted parameters take tc's defaults: p31 100-p13, p32 0, p23 100, p14 0)",
		parse: parseLoss,
		format: func(d Direction) string {
			if d.HasGE {
				return d.GE.String()
			}
			if d.HasFourState {
				return d.FourState.String()
			}
			return FmtNum(d.LossPct) + corrSuffix(d.LossCorr)
		}},
	{Key: "limit", Form: "pkts", Doc: "packet limit (netem counts the delay line; with a qdisc, the discipline's)",
		parse: func(v string, d *Direction) (err error) {
			d.Limit, err = parseCount(v, 1, MaxLimit)
			return err
		},
		format: func(d Direction) string { return strconv.Itoa(d.Limit) }},
	{Key: "dup", Form: "pct[/corr_pct]", Doc: "duplication; the copy may be lost too",
		parse: func(v string, d *Direction) (err error) {
			d.DupPct, d.DupCorr, err = pctCorrOf(v, "pct or pct/correlation_pct")
			return err
		},
		format: func(d Direction) string { return FmtNum(d.DupPct) + corrSuffix(d.DupCorr) }},
	{Key: "reorder", Form: "pct[/corr_pct[/gap]]",
		Doc:   "after gap-1 packets delayed normally, send each packet at once with probability pct, ahead of the delayed ones",
		parse: parseReorder,
		format: func(d Direction) string {
			v := FmtNum(d.ReorderPct)
			if d.ReorderGap > 1 {
				return v + "/" + FmtNum(d.ReorderCorr) + "/" + strconv.Itoa(d.ReorderGap)
			}
			return v + corrSuffix(d.ReorderCorr)
		}},
	{Key: "corrupt", Form: "pct[/corr_pct]", Doc: "flip one random bit of a packet, as netem's corrupt does, after making its checksum complete, so the receiver drops it",
		parse: func(v string, d *Direction) (err error) {
			d.CorruptPct, d.CorruptCorr, err = pctCorrOf(v, "pct or pct/correlation_pct")
			if err == nil && d.CorruptPct == 0 && d.CorruptCorr != 0 {
				err = fmt.Errorf("is 0%% with a correlation of %s%%, which correlates nothing; give a corruption above 0 or no correlation", FmtNum(d.CorruptCorr))
			}
			return err
		},
		format: func(d Direction) string { return FmtNum(d.CorruptPct) + corrSuffix(d.CorruptCorr) }},
	{Key: "qdisc", Form: "fifo|codel|fq_codel", Doc: "the queue discipline of the packets waiting for the rate (fifo: netem's drop-tail, the default)",
		parse: func(v string, d *Direction) error {
			switch v {
			case "fifo", "codel", "fq_codel":
				d.Queue.Kind, _ = aqm.ParseKind(v)
				return nil
			}
			return fmt.Errorf("names %q; the queue disciplines are fifo (netem's drop-tail, the default), codel and fq_codel", v)
		},
		format: func(d Direction) string {
			if !d.Queue.Managed() {
				return ""
			}
			return d.Queue.Kind.String()
		}},
	{Key: "target", Form: "ms", Doc: "CoDel's target (default 5)",
		parse:  func(v string, d *Direction) (err error) { d.Queue.Target, err = parseCoDelTime(v); return err },
		format: func(d Direction) string { return msOrNone(d.Queue.Target) }},
	{Key: "interval", Form: "ms", Doc: "CoDel's interval (default 100)",
		parse:  func(v string, d *Direction) (err error) { d.Queue.Interval, err = parseCoDelTime(v); return err },
		format: func(d Direction) string { return msOrNone(d.Queue.Interval) }},
	{Key: "flows", Form: "n", Doc: "FQ-CoDel's flow queues (default 1024)",
		parse:  func(v string, d *Direction) (err error) { d.Queue.Flows, err = parseCount(v, 1, 65536); return err },
		format: func(d Direction) string { return countOrNone(d.Queue.Flows) }},
	{Key: "quantum", Form: "bytes", Doc: "FQ-CoDel's quantum (default 1514)",
		parse:  func(v string, d *Direction) (err error) { d.Queue.Quantum, err = parseCount(v, 256, 1<<20); return err },
		format: func(d Direction) string { return countOrNone(d.Queue.Quantum) }},
	{Key: "ecn", Form: "on|off", Doc: "mark ECN-capable packets CE instead of dropping them (default off, for both disciplines)",
		parse: func(v string, d *Direction) error {
			switch v {
			case "on", "off":
				d.Queue.ECN = v == "on"
				return nil
			}
			return fmt.Errorf("is %q; ecn is on or off", v)
		},
		format: func(d Direction) string {
			if d.Queue.ECN {
				return "on"
			}
			return ""
		}},
	{Key: "schedule", Form: "spec", Doc: "timed changes while the link runs: blackout:DUR/EVERY[/hold], step:HI/LO/DUR/EVERY or a JSON file (see Schedule)",
		NotOnNetem: func(d Direction) string {
			if (Schedule{Changes: d.Changes}).holds() {
				return fmt.Sprintf("'s schedule (%s) holds packets during a blackout, which netem cannot do", d.Schedule)
			}
			return ""
		},
		parse:  func(v string, d *Direction) error { d.Schedule = v; return nil },
		load:   func(v string) error { _, err := LoadSchedule(v); return err },
		format: func(d Direction) string { return d.Schedule }},
	{Key: "trace", Form: "spec", Doc: "a Mahimahi trace in place of the rate: a file, const:MBIT or cell:MBIT/CV[/SEED] (see Trace)",
		NotOnNetem: func(d Direction) string {
			if d.Trace != "" {
				return fmt.Sprintf("'s rate is a trace (%s), which netem cannot follow", d.Trace)
			}
			return ""
		},
		parse:  func(v string, d *Direction) error { d.Trace = v; return nil },
		load:   func(v string) error { _, err := LoadTrace(v); return err },
		format: func(d Direction) string { return d.Trace }},
	{Key: "cross", Form: "NxKIND[+NxKIND...]", Doc: "bulk flows beside the session, sent in this direction from before the session starts until the link closes: KIND quic or a kernel TCP congestion control (2xcubic, 1xreno+1xquic)",
		parse:  parseCross,
		format: func(d Direction) string { return formatCross(d.Cross) }},
}

// Describe renders d in tc-like words, the emulator's applied line after
// "emulator ": "delay 40ms rate 10Mbit limit 110 loss 1% seed 7". Terms
// that are not in force (no loss, no jitter) are left out, as tc leaves
// them out; the limit is HeldLimit, and the rate is left out where a
// trace replaces it.
func (d Direction) Describe() string {
	var b strings.Builder
	b.WriteString("delay " + fmtDuration(d.Delay))
	if d.Jitter > 0 {
		b.WriteString(" jitter " + fmtDuration(d.Jitter) + pctTerm("", d.JitterCorr))
		if d.JitterDist != "" && d.JitterDist != "uniform" {
			b.WriteString(" distribution " + d.JitterDist)
		}
	}
	if len(d.TraceMs) == 0 && d.RateBits() > 0 {
		b.WriteString(" rate " + fmtRate(d.RateBits()))
	}
	fmt.Fprintf(&b, " limit %d", d.HeldLimit())
	if d.LossPct > 0 {
		b.WriteString(pctTerm(" loss", d.LossPct) + pctTerm("", d.LossCorr))
	}
	if g := d.GE; d.HasGE {
		fmt.Fprintf(&b, " loss gemodel p %s r %s 1-h %s 1-k %s", pctWord(g.P), pctWord(g.R), pctWord(g.OneMinusH), pctWord(g.OneMinusK))
	}
	if f := d.FourState; d.HasFourState {
		fmt.Fprintf(&b, " loss state p13 %s p31 %s p32 %s p23 %s p14 %s", pctWord(f.P13), pctWord(f.P31), pctWord(f.P32), pctWord(f.P23), pctWord(f.P14))
	}
	if d.DupPct > 0 {
		b.WriteString(pctTerm(" duplicate", d.DupPct) + pctTerm("", d.DupCorr))
	}
	if d.ReorderPct > 0 {
		b.WriteString(pctTerm(" reorder", d.ReorderPct) + pctTerm("", d.ReorderCorr))
		fmt.Fprintf(&b, " gap %d", max(d.ReorderGap, 1))
	}
	if d.CorruptPct > 0 {
		b.WriteString(pctTerm(" corrupt", d.CorruptPct) + pctTerm("", d.CorruptCorr))
	}
	if d.Queue.Managed() {
		b.WriteString(" qdisc " + d.Queue.Config(d.Limit).Describe())
	}
	if n := len(d.TraceMs); n > 0 {
		period := d.TraceMs[n-1]
		fmt.Fprintf(&b, " trace %d opportunities every %dms (mean %s)", n, period, fmtRate(uint64(math.Round(float64(n)*TraceOpportunity*8*1000/float64(period)))))
	}
	if n := len(d.Changes); n > 0 {
		fmt.Fprintf(&b, " schedule %d changes", n)
		if d.SchedulePeriod > 0 {
			b.WriteString(" every " + fmtDuration(d.SchedulePeriod))
		}
	}
	fmt.Fprintf(&b, " seed %d", d.Seed)
	return b.String()
}

// parseJitter reads ms[/distribution[/correlation_pct]].
func parseJitter(val string, d *Direction) error {
	parts := strings.Split(val, "/")
	if len(parts) > 3 {
		return fmt.Errorf("%q has %d parts; want ms, ms/distribution or ms/distribution/correlation_pct", val, len(parts))
	}
	j, err := ParseMs(parts[0])
	if err != nil {
		return fmt.Errorf("%v; jitter is the spread either side of the delay in ms, or the standard deviation with a distribution", err)
	}
	if j > MaxJitterMs*time.Millisecond {
		return fmt.Errorf("%q is more than %d ms (netem keeps the jitter in 32-bit nanoseconds)", parts[0], MaxJitterMs)
	}
	d.Jitter, d.JitterDist, d.JitterCorr = j, "", 0
	if len(parts) > 1 {
		switch parts[1] {
		case "uniform":
		case "normal", "pareto", "paretonormal":
			d.JitterDist = parts[1]
		default:
			return fmt.Errorf("names distribution %q; the distributions are uniform (the default), normal, pareto and paretonormal", parts[1])
		}
	}
	if len(parts) > 2 {
		if d.JitterCorr, err = ParsePct(parts[2]); err != nil {
			return fmt.Errorf("correlation %v", err)
		}
	}
	return nil
}

// parseLoss reads pct[/correlation_pct], ge:p/r[/1-h[/1-k]] or
// state:p13[/p31[/p32[/p23[/p14]]]].
func parseLoss(val string, d *Direction) error {
	if ge, ok := strings.CutPrefix(val, "ge:"); ok {
		g, err := parseGE(ge)
		if err != nil {
			return err
		}
		d.GE, d.HasGE, d.LossPct, d.LossCorr = g, true, 0, 0
		d.FourState, d.HasFourState = FourState{}, false
		return nil
	}
	if st, ok := strings.CutPrefix(val, "state:"); ok {
		f, err := parseFourState(st)
		if err != nil {
			return err
		}
		d.FourState, d.HasFourState, d.LossPct, d.LossCorr = f, true, 0, 0
		d.GE, d.HasGE = GE{}, false
		return nil
	}
	var err error
	d.LossPct, d.LossCorr, err = pctCorrOf(val, "pct or pct/correlation_pct, ge:p/r[/1-h[/1-k]] or state:p13[/p31[/p32[/p23[/p14]]]]")
	d.GE, d.HasGE = GE{}, false
	d.FourState, d.HasFourState = FourState{}, false
	return err
}

// parseReorder reads pct[/correlation_pct[/gap]].
func parseReorder(val string, d *Direction) error {
	parts := strings.Split(val, "/")
	if len(parts) > 3 {
		return fmt.Errorf("%q has %d parts; want pct, pct/correlation_pct or pct/correlation_pct/gap", val, len(parts))
	}
	var err error
	if d.ReorderPct, d.ReorderCorr, err = pctCorr(parts[:min(len(parts), 2)]); err != nil {
		return err
	}
	d.ReorderGap = 0
	if len(parts) > 2 {
		n, err := strconv.Atoi(parts[2])
		if err != nil || !IsDigits(parts[2]) || n < 1 {
			return fmt.Errorf("gap %q is not a whole number of packets of at least 1", parts[2])
		}
		if n > 1 {
			d.ReorderGap = n
		}
	}
	return nil
}
