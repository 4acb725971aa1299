package emulator

import (
	"errors"
	"fmt"
	"math"
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
			// Applied as whole bits per second, where 0 is no rate.
			if bits := c.Value * 1e6; math.Round(bits) < 1 || math.Abs(bits-math.Round(bits)) > 1e-12*bits {
				return bad(fmt.Sprintf("has a rate of %v bit/s, not a whole number of bits per second above 0, which is what the emulator applies (a rate that rounded to 0 would be no rate at all)", bits))
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
