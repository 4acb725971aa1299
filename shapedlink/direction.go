package shapedlink

import (
	"fmt"
	"slices"
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
