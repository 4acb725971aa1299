package emulator

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/aqm"
	"github.com/shakenfist/quicbench/shapedlink/internal/disttable"
)

// Direction is the emulated link in one direction.
type Direction struct {
	// Delay is the one-way propagation delay added to every frame.
	Delay time.Duration
	// Jitter varies each accepted frame's delay, as netem's "delay D J
	// [CORR] [distribution NAME]" does: with no JitterDist uniformly over
	// [Delay-Jitter, Delay+Jitter), with one as Delay plus Jitter times a
	// draw from the table (Jitter is then the standard deviation, up to
	// the table's clamping at 4 sigma; see package disttable). With a rate
	// a frame still never leaves before the one ahead of it, as in netem;
	// with no rate jitter can reorder frames, as netem's tfifo does. At
	// most 2^31-1 ns (netem's 32-bit sigma).
	Jitter time.Duration `json:",omitempty"`
	// JitterDist names the distribution: "" or "uniform", "normal",
	// "pareto", "paretonormal".
	JitterDist string `json:",omitempty"`
	// JitterCorr, LossCorr, DupCorr and ReorderCorr are netem's
	// correlations, in percent: each draw of that process is mixed with
	// the previous one (get_crandom), which makes runs of similar values
	// but, as in netem, also changes the process's marginal distribution
	// (a correlated 1% loss loses fewer than 1% of frames).
	JitterCorr float64 `json:",omitempty"`
	LossCorr   float64 `json:",omitempty"`
	// DupPct is the probability, in percent, that a frame is duplicated
	// (netem's "duplicate"). The duplicate is judged before the original
	// and may itself be lost or refused by the limit.
	DupPct  float64 `json:",omitempty"`
	DupCorr float64 `json:",omitempty"`
	// ReorderPct is netem's "reorder PCT [CORR] gap G": once at least
	// ReorderGap-1 frames have been sent normally, each frame is sent at
	// once (no delay, no rate) with this probability. ReorderGap 0 means
	// 1, as tc sets it. It needs a Delay, as tc says.
	ReorderPct  float64 `json:",omitempty"`
	ReorderCorr float64 `json:",omitempty"`
	ReorderGap  int     `json:",omitempty"`
	// Queue, when not nil, is a queue discipline (package aqm) for the
	// frames waiting for the rate: it decides which frame the link
	// serialises next, and drops or marks by its own rules; the delay
	// follows serialisation. Limit still bounds every frame held, the
	// delay line included, so it must leave room above the discipline's
	// own limit for what the delay line holds. It needs a rate, and is not
	// combined with duplication or reordering.
	Queue *aqm.Config `json:",omitempty"`
	// RateBitsPerSec is the link rate. Each frame occupies len*8/rate of
	// the link, where len is the whole Ethernet frame including its
	// 14-byte header (what netem's rate counts on a veth). Zero means no
	// rate limit, as in netem.
	RateBitsPerSec uint64
	// Limit is the most frames held at once, counting frames still in
	// the delay line (netem's limit). It must be at least 1.
	Limit int
	// LossPct is the probability, in percent, that an arriving frame is
	// dropped before anything else happens to it; 0 <= LossPct < 100.
	LossPct float64
	// GE, when not nil, replaces LossPct with netem's Gilbert-Elliott
	// loss model (tc-netem's "loss gemodel p r 1-h 1-k").
	GE *GE `json:",omitempty"`
	// Schedule is a list of timed changes, in time order, counted from
	// the shaper's start (Monitor.ScheduleBase); with SchedulePeriod above
	// zero it repeats every period. A change applies to the frames that
	// arrive from its time on (their kernel timestamps decide), so it
	// takes effect exactly at its time whenever the forwarding thread
	// gets to it; frames already accepted keep their times.
	Schedule       []Change      `json:",omitempty"`
	SchedulePeriod time.Duration `json:",omitempty"`
	// TraceMs, when not empty, replaces the rate with a Mahimahi trace:
	// delivery opportunities of 1500 bytes at these times in
	// milliseconds from the shaper's start, repeating with the last time
	// as the period (mm-link's rule; see shapedlink.Trace). The rate must
	// then be zero.
	TraceMs []uint32 `json:",omitempty"`
	// Seed seeds this direction's loss PRNG. Zero asks Command to draw a
	// random seed; the seed in use is always reported by Monitor.Seeds
	// and in Monitor.Describe.
	Seed uint64
}

// GE is the Gilbert-Elliott loss model as netem (sch_netem.c,
// loss_gilb_ell) runs it, all four parameters in percent. The chain has a
// good and a bad state and starts good. For each frame, in the state the
// frame finds: from good, move to bad with probability P, and lose the
// frame with probability OneMinusK; from bad, move to good with
// probability R, and lose the frame with probability OneMinusH. The loss
// is drawn with the state the frame found, before the move. With
// OneMinusH 100 and OneMinusK 0 (the defaults of tc's gemodel) this is the
// simple Gilbert model: the mean loss is P/(P+R) and a loss burst lasts
// 1/R frames on average (100/R with R in percent).
type GE struct {
	P, R, OneMinusH, OneMinusK float64
}

// MeanLoss is the long-run fraction of frames lost (0-1).
func (g GE) MeanLoss() float64 {
	p, r := g.P/100, g.R/100
	if p+r == 0 {
		return g.OneMinusK / 100 // never leaves the good state
	}
	bad := p / (p + r)
	return (1-bad)*g.OneMinusK/100 + bad*g.OneMinusH/100
}

func (g GE) validate(name string) error {
	for _, f := range []struct {
		what string
		v    float64
	}{{"p", g.P}, {"r", g.R}, {"1-h", g.OneMinusH}, {"1-k", g.OneMinusK}} {
		if math.IsNaN(f.v) || f.v < 0 || f.v > 100 {
			return fmt.Errorf("emulator: %s.GE %s is %v; it must be a percentage between 0 and 100", name, f.what, f.v)
		}
	}
	return nil
}

// Change is one timed change of a Direction's Schedule.
type Change struct {
	At time.Duration
	// Set is "rate" (Value in Mbit/s), "delay" (one-way ms), "loss"
	// (percent), "limit" (packets), "down" (a blackout starts: arrivals
	// are dropped, or with Hold accepted and held until the next "up")
	// or "up".
	Set   string
	Value float64 `json:",omitempty"`
	Hold  bool    `json:",omitempty"`
}

// TraceOpportunity is the bytes one trace delivery opportunity carries.
const TraceOpportunity = 1500

// Config is one shaper: two interfaces in the shaper's network namespace
// and the link in each direction. A is the server side, B the client side:
// AToB shapes frames that arrive on IfA and leave on IfB.
type Config struct {
	IfA, IfB   string
	AToB, BToA Direction
	// SpinThreshold is how long before a frame's due time the forwarding
	// thread stops sleeping and spins on the clock (still reading its
	// socket). Zero means DefaultSpinThreshold; a negative value never
	// spins (lowest CPU; the timer's wake-up latency is then added to
	// every frame). Spinning is capped at a quarter of each 10 ms, so a
	// high packet rate falls back to timer wake-ups rather than a thread
	// that never sleeps.
	SpinThreshold time.Duration
	// Nice is the nice value for the two forwarding threads; 0 leaves
	// them at the shaper's inherited priority. A negative value (e.g.
	// DefaultNice) needs CAP_SYS_NICE; when it cannot be applied the
	// shaper runs anyway and Monitor.Priority says so.
	Nice int
	// NormalPriority keeps the shaper at the scheduling policy it
	// inherited. By default it asks for SCHED_FIFO priority 1 for all its
	// threads, because a busy machine delays a normal-priority forwarding
	// thread by milliseconds at any nice value, while a real link (or
	// netem, which runs in softirq context) is not delayed by user
	// processes. That needs CAP_SYS_NICE (root); when it cannot be applied
	// the shaper runs anyway and Monitor.Priority says so. The spin cap
	// keeps a realtime thread from monopolising a core.
	NormalPriority bool
}

// DefaultNice is the nice value shapedlink asks for: a real link (or
// netem, which runs in softirq context) is not delayed by busy user
// processes, and a forwarding thread at nice 0 on a loaded machine waits
// for the CPU for milliseconds.
const DefaultNice = -10

// DefaultSpinThreshold is the spin stretch used when Config.SpinThreshold
// is zero. On the 2-core VM this was measured on, a SCHED_FIFO thread's
// ppoll wake-up was up to a few hundred microseconds late under load; at
// 150 us a quarter of idle echoes' frames still left 64-512 us late, at
// 400 us one in ten.
const DefaultSpinThreshold = 300 * time.Microsecond

// MaxLimit bounds Direction.Limit so the preallocated frame ring stays a
// sane size.
const MaxLimit = 1 << 20

// Validate reports the first thing wrong with c, naming the field.
func (c Config) Validate() error {
	if c.IfA == "" || c.IfB == "" {
		return errors.New("emulator: Config.IfA and Config.IfB must name the two interfaces in the shaper namespace")
	}
	if c.Nice < -20 || c.Nice > 19 {
		return fmt.Errorf("emulator: Config.Nice is %d; nice values run from -20 to 19", c.Nice)
	}
	if c.IfA == c.IfB {
		return fmt.Errorf("emulator: Config.IfA and Config.IfB are both %q; the shaper needs two different interfaces", c.IfA)
	}
	if err := c.AToB.validate("AToB"); err != nil {
		return err
	}
	return c.BToA.validate("BToA")
}

func (d Direction) validate(name string) error {
	switch {
	case d.Delay < 0:
		return fmt.Errorf("emulator: %s.Delay is %v; it must be zero or positive", name, d.Delay)
	case d.Delay > time.Hour:
		return fmt.Errorf("emulator: %s.Delay is %v; more than an hour is surely a unit mistake", name, d.Delay)
	case d.Jitter < 0 || d.Jitter > math.MaxInt32:
		return fmt.Errorf("emulator: %s.Jitter is %v; it must be between zero and %v (netem's 32-bit sigma)", name, d.Jitter, time.Duration(math.MaxInt32))
	case d.JitterDist != "" && d.JitterDist != "uniform" && !knownDist(d.JitterDist):
		return fmt.Errorf("emulator: %s.JitterDist is %q; the distributions are uniform, %s", name, d.JitterDist, strings.Join(disttable.Names(), ", "))
	case badPct(d.JitterCorr) || badPct(d.LossCorr) || badPct(d.DupCorr) || badPct(d.ReorderCorr):
		return fmt.Errorf("emulator: %s has a correlation outside 0-100%% (jitter %v, loss %v, dup %v, reorder %v)", name, d.JitterCorr, d.LossCorr, d.DupCorr, d.ReorderCorr)
	case badPct(d.DupPct):
		return fmt.Errorf("emulator: %s.DupPct is %v; it must be a percentage between 0 and 100", name, d.DupPct)
	case badPct(d.ReorderPct):
		return fmt.Errorf("emulator: %s.ReorderPct is %v; it must be a percentage between 0 and 100", name, d.ReorderPct)
	case d.ReorderGap < 0:
		return fmt.Errorf("emulator: %s.ReorderGap is %d; it must be zero or positive", name, d.ReorderGap)
	case d.Queue != nil && d.RateBitsPerSec == 0:
		return fmt.Errorf("emulator: %s has a queue discipline and no rate; the discipline manages the frames waiting for the rate", name)
	case d.Queue != nil && (d.DupPct > 0 || d.ReorderPct > 0):
		return fmt.Errorf("emulator: %s has a queue discipline with duplication or reordering; the emulator does not combine them", name)
	case d.Queue != nil && d.Queue.WithDefaults().Validate() != nil:
		return fmt.Errorf("emulator: %s.Queue: %w", name, d.Queue.WithDefaults().Validate())
	case d.ReorderPct > 0 && d.Delay == 0:
		return fmt.Errorf("emulator: %s reorders with no Delay; reordering sends a frame ahead of delayed ones, so it needs a delay (as tc says)", name)
	case d.Limit < 1:
		return fmt.Errorf("emulator: %s.Limit is %d; it must be at least 1 packet", name, d.Limit)
	case d.Limit > MaxLimit:
		return fmt.Errorf("emulator: %s.Limit is %d; the emulator supports at most %d packets", name, d.Limit, MaxLimit)
	case math.IsNaN(d.LossPct) || d.LossPct < 0 || d.LossPct >= 100:
		return fmt.Errorf("emulator: %s.LossPct is %v; it must satisfy 0 <= loss < 100", name, d.LossPct)
	case d.LossCorr > 0 && d.GE != nil:
		return fmt.Errorf("emulator: %s has both LossCorr and GE; the Gilbert-Elliott model has its own memory", name)
	case d.GE != nil && d.LossPct != 0:
		return fmt.Errorf("emulator: %s has both LossPct and GE; a direction has one loss model", name)
	case d.GE != nil:
		if err := d.GE.validate(name); err != nil {
			return err
		}
	}
	return d.validateTimeVarying(name)
}

// validateTimeVarying checks the schedule and the trace.
func (d Direction) validateTimeVarying(name string) error {
	if len(d.TraceMs) > 0 {
		switch {
		case d.RateBitsPerSec != 0:
			return fmt.Errorf("emulator: %s has both a rate and a trace; the trace is the rate", name)
		case d.Queue != nil:
			return fmt.Errorf("emulator: %s has a trace and a queue discipline; the emulator does not combine them", name)
		case d.TraceMs[len(d.TraceMs)-1] == 0:
			return fmt.Errorf("emulator: %s's trace lasts no time (its last opportunity, the period, is at 0 ms)", name)
		}
		for i := 1; i < len(d.TraceMs); i++ {
			if d.TraceMs[i] < d.TraceMs[i-1] {
				return fmt.Errorf("emulator: %s's trace goes back in time at entry %d", name, i)
			}
		}
	}
	if len(d.Schedule) == 0 {
		return nil
	}
	if d.Queue != nil {
		return fmt.Errorf("emulator: %s has a schedule and a queue discipline; the emulator does not combine them", name)
	}
	if d.SchedulePeriod < 0 {
		return fmt.Errorf("emulator: %s.SchedulePeriod is %v; it must be zero (run once) or positive", name, d.SchedulePeriod)
	}
	for i, c := range d.Schedule {
		bad := func(why string) error {
			return fmt.Errorf("emulator: %s.Schedule[%d] (%s at %v) %s", name, i, c.Set, c.At, why)
		}
		switch {
		case c.At < 0 || d.SchedulePeriod > 0 && c.At >= d.SchedulePeriod:
			return bad("is outside the schedule's period")
		case i > 0 && c.At < d.Schedule[i-1].At:
			return bad("is before the change ahead of it; the schedule must be in time order")
		}
		switch c.Set {
		case "rate":
			if len(d.TraceMs) > 0 {
				return bad("changes the rate of a direction whose rate is a trace")
			}
			if !(c.Value > 0 && c.Value <= 1e6) {
				return bad("needs a rate above 0 and at most 1000000 Mbit/s")
			}
		case "delay":
			if !(c.Value >= 0 && c.Value <= 3.6e6) {
				return bad("needs a delay between 0 and an hour, in ms")
			}
		case "loss":
			if d.GE != nil {
				return bad("changes the loss of a direction with the Gilbert-Elliott model")
			}
			if !(c.Value >= 0 && c.Value < 100) {
				return bad("needs a loss from 0 to under 100 percent")
			}
		case "limit":
			if c.Value < 1 || c.Value > MaxLimit || c.Value != math.Trunc(c.Value) {
				return bad(fmt.Sprintf("needs a whole number of packets from 1 to %d", MaxLimit))
			}
		case "down", "up":
		default:
			return bad("sets nothing known (rate, delay, loss, limit, down, up)")
		}
	}
	return nil
}

// maxScheduledLimit is the largest limit d ever has: its own and any its
// schedule sets (the forwarding loop sizes its buffers for it).
func (d Direction) maxScheduledLimit() int {
	n := d.Limit
	for _, c := range d.Schedule {
		if c.Set == "limit" {
			n = max(n, int(c.Value))
		}
	}
	return n
}

// Describe renders d as a tc-like line, for example
// "emulator delay 40ms rate 10Mbit limit 110 loss 1% seed 7". Terms that
// are not in force (no rate, no loss) are left out, as tc leaves them out.
func (d Direction) Describe() string {
	var b strings.Builder
	b.WriteString("emulator delay ")
	b.WriteString(formatDuration(d.Delay))
	if d.Jitter > 0 {
		b.WriteString(" jitter ")
		b.WriteString(formatDuration(d.Jitter))
		if d.JitterCorr > 0 {
			b.WriteString(" " + pctString(d.JitterCorr))
		}
		if d.JitterDist != "" && d.JitterDist != "uniform" {
			b.WriteString(" distribution " + d.JitterDist)
		}
	}
	if d.RateBitsPerSec > 0 {
		b.WriteString(" rate ")
		b.WriteString(formatRate(d.RateBitsPerSec))
	}
	fmt.Fprintf(&b, " limit %d", d.Limit)
	if d.LossPct > 0 {
		b.WriteString(" loss ")
		b.WriteString(pctString(d.LossPct))
		if d.LossCorr > 0 {
			b.WriteString(" " + pctString(d.LossCorr))
		}
	}
	if g := d.GE; g != nil {
		fmt.Fprintf(&b, " loss gemodel p %s r %s 1-h %s 1-k %s", pctString(g.P), pctString(g.R), pctString(g.OneMinusH), pctString(g.OneMinusK))
	}
	if d.DupPct > 0 {
		b.WriteString(" duplicate " + pctString(d.DupPct))
		if d.DupCorr > 0 {
			b.WriteString(" " + pctString(d.DupCorr))
		}
	}
	if d.ReorderPct > 0 {
		b.WriteString(" reorder " + pctString(d.ReorderPct))
		if d.ReorderCorr > 0 {
			b.WriteString(" " + pctString(d.ReorderCorr))
		}
		fmt.Fprintf(&b, " gap %d", max(d.ReorderGap, 1))
	}
	if d.Queue != nil {
		b.WriteString(" qdisc " + d.Queue.Describe())
	}
	if n := len(d.TraceMs); n > 0 {
		period := d.TraceMs[n-1]
		fmt.Fprintf(&b, " trace %d opportunities every %dms (mean %s)", n, period, formatRate(uint64(math.Round(float64(n)*TraceOpportunity*8*1000/float64(period)))))
	}
	if n := len(d.Schedule); n > 0 {
		fmt.Fprintf(&b, " schedule %d changes", n)
		if d.SchedulePeriod > 0 {
			fmt.Fprintf(&b, " every %s", formatDuration(d.SchedulePeriod))
		}
	}
	fmt.Fprintf(&b, " seed %d", d.Seed)
	return b.String()
}

func pctString(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) + "%" }

func badPct(v float64) bool { return math.IsNaN(v) || v < 0 || v > 100 }

func knownDist(name string) bool {
	for _, n := range disttable.Names() {
		if n == name {
			return true
		}
	}
	return false
}

func formatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0ms"
	case d%time.Millisecond == 0:
		return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
	case d >= time.Millisecond:
		return strconv.FormatFloat(float64(d)/1e6, 'f', -1, 64) + "ms"
	default:
		return strconv.FormatFloat(float64(d)/1e3, 'f', -1, 64) + "us"
	}
}

func formatRate(r uint64) string {
	switch {
	case r%1_000_000_000 == 0:
		return strconv.FormatUint(r/1_000_000_000, 10) + "Gbit"
	case r%1_000_000 == 0:
		return strconv.FormatUint(r/1_000_000, 10) + "Mbit"
	case r%1_000 == 0:
		return strconv.FormatUint(r/1_000, 10) + "Kbit"
	case r >= 1_000_000:
		return strconv.FormatFloat(float64(r)/1e6, 'f', -1, 64) + "Mbit"
	default:
		return strconv.FormatUint(r, 10) + "bit"
	}
}

// DirStats are one direction's counters. Packets and Bytes are gauges (what
// is held right now, queue and delay line together, as netem's backlog
// counts); the rest count up from the shaper's start. Bytes count whole
// Ethernet frames, header included.
type DirStats struct {
	Packets uint64 // frames held now
	Bytes   uint64 // bytes held now

	Received       uint64 // frames read from the ingress interface
	Forwarded      uint64 // frames written to the egress interface
	ForwardedBytes uint64
	LossDrops      uint64 // dropped by the random loss
	LimitDrops     uint64 // dropped because Limit frames were held
	OversizeDrops  uint64 // larger than the frame buffer (offloads left on?)
	SendErrors     uint64 // the egress write failed (frame lost)
	SocketDrops    uint64 // dropped by the kernel before the shaper read them (receive buffer full)
	BlackoutDrops  uint64 `json:",omitempty"` // dropped because the schedule had the direction down
	// Changes counts the schedule's changes applied so far, and
	// MaxChangeLagNanos the longest the forwarding thread took to get to
	// one after its time (the change itself applies at its time, to the
	// frames' kernel timestamps; the lag only delays when it is counted).
	Changes           uint64 `json:",omitempty"`
	MaxChangeLagNanos uint64 `json:",omitempty"`
	Duplicates        uint64 `json:",omitempty"` // frames duplicated (DupPct); the copies are counted in Forwarded or the drops like any frame
	Reordered         uint64 `json:",omitempty"` // frames sent at once by the reordering (ReorderPct)
	// With a queue discipline (Queue): frames it dropped at enqueue
	// because its limit was reached, frames CoDel dropped, frames CoDel
	// marked CE instead, and the frames waiting in the queue now (a
	// gauge, part of Packets).
	QueueDrops uint64 `json:",omitempty"`
	CoDelDrops uint64 `json:",omitempty"`
	ECNMarks   uint64 `json:",omitempty"`
	Queued     uint64 `json:",omitempty"`

	// LateNanos is the sum over forwarded frames of how long after its
	// due time each was written; MaxLateNanos the largest. They measure
	// the shaper's timing error, not the model's.
	LateNanos    uint64
	MaxLateNanos uint64
	// Late is a histogram of the same lateness, log-linear in whole
	// microseconds: Late[i] for i < 16 counts frames late by [i, i+1) us
	// (Late[0] those written less than 1 us after their due time); above
	// that each power of two [2^e, 2^(e+1)) us, 4 <= e <= 19, is split
	// into 8 equal buckets of 2^(e-3) us, so no bucket is wider than 1/8
	// (12.5%) of its lower edge; the last bucket, Late[LateBuckets-1],
	// counts everything late by 2^20 us (1.048576 s) or more.
	// LateBucket maps a lateness to its bucket, LateBucketEdges gives a
	// bucket's edges.
	Late [LateBuckets]uint64
	// Stamped counts received frames whose arrival time came from the
	// kernel's receive timestamp; the rest (Received - Stamped) were
	// stamped when read, which adds the thread's wake-up latency.
	Stamped uint64

	// RcvBufBytes is the receive buffer of the ingress socket, and
	// SndBufBytes the send buffer of the egress socket, as applied: read
	// back with getsockopt once set, so they are what the kernel granted,
	// not what was asked for (8 MiB). The kernel reports twice the size
	// set (its allowance for bookkeeping), so a granted 8 MiB reads as
	// 16 MiB; without CAP_NET_ADMIN in the initial namespace the size set
	// is capped at net.core.rmem_max (wmem_max). Zero until the shaper is
	// ready.
	RcvBufBytes uint64
	SndBufBytes uint64
}

// The lateness histogram (DirStats.Late) is log-linear, in the manner of
// HdrHistogram: lateSub linear buckets per power of two of microseconds,
// exact (1 us wide) below 2*lateSub us, up to 2^lateTopBits us, then one
// overflow bucket.
const (
	lateSubBits = 3                // log2 of the buckets per power of two
	lateSub     = 1 << lateSubBits // buckets per power of two: 8, so at most 12.5% wide
	lateTopBits = 20               // the overflow bucket starts at 2^20 us (1.048576 s)

	// LateBuckets is the number of buckets in DirStats.Late (145): 16
	// exact 1-us buckets for 0-15 us, 8 for each power of two from
	// [16, 32) us to [2^19, 2^20) us, and the overflow bucket.
	LateBuckets = (lateTopBits-lateSubBits+1)<<lateSubBits + 1
)

// LateBucket returns the index in DirStats.Late of a frame late by nanos
// nanoseconds. It is called for every forwarded frame, so it does not
// allocate and uses no floating point.
func LateBucket(nanos uint64) int {
	us := nanos / 1000
	// Below 2*lateSub us the shift k is 0 and the index is us itself;
	// above, us lies in [2^e, 2^(e+1)) and k = e - lateSubBits keeps its
	// lateSubBits+1 leading bits, us>>k in [lateSub, 2*lateSub), the
	// lateSub buckets of that power of two.
	k := max(bits.Len64(us)-(lateSubBits+1), 0)
	if k > lateTopBits-lateSubBits-1 {
		return LateBuckets - 1
	}
	return k<<lateSubBits + int(us>>k)
}

// LateBucketEdges returns bucket i's edges in nanoseconds: it counts the
// lateness in [lo, hi). The overflow bucket, LateBuckets-1, has no upper
// edge; hi is math.MaxUint64 for it.
func LateBucketEdges(i int) (lo, hi uint64) {
	if i >= LateBuckets-1 {
		return (1 << lateTopBits) * 1000, math.MaxUint64
	}
	if i < 2*lateSub {
		return uint64(i) * 1000, uint64(i+1) * 1000
	}
	// The inverse of LateBucket: i = k*lateSub + m, m in [lateSub, 2*lateSub).
	k := i>>lateSubBits - 1
	m := uint64(i - k<<lateSubBits)
	return (m << k) * 1000, ((m + 1) << k) * 1000
}

// LateQuantile returns an upper bound on the q-quantile (0 < q <= 1) of
// the shaper's lateness from the histogram Late: the quantile is taken as
// the ceil(q*n)-th smallest of the n frames, and the bound is the upper
// edge of the bucket it falls in (see DirStats.Late: at most 12.5% or
// 1 us above the true value), or MaxLateNanos if that is smaller and lies
// in the same bucket, so the 1-quantile is exact. For the overflow bucket,
// which has no upper edge, it is MaxLateNanos. (The shaper publishes
// MaxLateNanos after each batch and the buckets per frame, so a reader
// may see a MaxLateNanos below the quantile's bucket; it is then ignored,
// and for the overflow bucket its lower edge, 2^20 us, is returned.) It
// returns 0 when nothing was forwarded.
func (s DirStats) LateQuantile(q float64) time.Duration {
	var total uint64
	for _, c := range s.Late {
		total += c
	}
	if total == 0 {
		return 0
	}
	need := uint64(math.Ceil(q * float64(total)))
	i := LateBuckets - 1
	var seen uint64
	for j, c := range s.Late {
		seen += c
		if seen >= need && c > 0 {
			i = j
			break
		}
	}
	lo, hi := LateBucketEdges(i)
	switch {
	case s.MaxLateNanos >= lo && s.MaxLateNanos < hi:
		return time.Duration(s.MaxLateNanos)
	case i == LateBuckets-1:
		return time.Duration(lo) // MaxLateNanos lags the histogram
	}
	return time.Duration(hi)
}

// Drops is every frame this direction dropped, for any reason.
func (s DirStats) Drops() uint64 {
	return s.LossDrops + s.LimitDrops + s.OversizeDrops + s.SendErrors + s.SocketDrops + s.BlackoutDrops
}
