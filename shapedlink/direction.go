package shapedlink

import (
	"fmt"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// Dir names one direction of a link: Down (server to client, the server
// end's egress) or Up (client to server). Its String is "down" or "up".
type Dir = linkspec.Dir

// The two directions.
const (
	Down = linkspec.Down
	Up   = linkspec.Up
)

// Direction is one direction of a link with every setting resolved, as
// Profile.Direction gives it: the one description of a direction that
// the netem encoder writes and the emulator's model runs. Its fields:
// Delay, Jitter, JitterDist and JitterCorr (netem's "delay D J [CORR]
// [distribution NAME]"), RateMbit, LossPct and LossCorr or the
// Gilbert-Elliott GE (with HasGE) or the 4-state FourState (with
// HasFourState), DupPct and DupCorr, ReorderPct,
// ReorderCorr and ReorderGap, Limit (the packet limit, counted as netem
// counts it), Queue (the queue discipline), and the Schedule and Trace
// specs; the loaded Changes, SchedulePeriod, TraceMs and the Seed are
// filled by a link that runs it. CorruptPct and CorruptCorr are the
// corruption (netem's "corrupt PCT [CORR]").
//
// Its methods: Check and CheckLoaded (the latter with the schedule and
// trace loaded) return the option key a setting makes meaningless and
// why, or two empty strings; Describe is the direction as an applied line
// gives it ("delay 40ms rate 10Mbit limit 110 ..."); RateBits is the rate
// in bits per second; HeldLimit is the most packets it holds at once, the
// delay line included, and MaxHeld the largest HeldLimit its schedule
// ever sets; Random reports whether it draws random numbers; JitterCDF is
// the distribution of one frame's jitter (nil without jitter).
type Direction = linkspec.Direction

// Queue is a queue discipline at a direction's bottleneck, as tc-codel(8)
// and tc-fq_codel(8) describe them: Kind (QueueFIFO, netem's own
// drop-tail and the zero value; QueueCoDel; QueueFQCoDel), Target,
// Interval, Flows, Quantum and ECN. Zero fields take the kernel's
// defaults (target 5 ms, interval 100 ms, 1024 flows, quantum 1514 bytes);
// ECN is off unless asked for, for both. Its packet limit is the
// direction's Limit. Managed reports whether it is a discipline rather
// than netem's drop-tail; Config is it as the emulator's discipline runs
// it, holding at most a given number of packets.
type Queue = linkspec.Queue

// QueueKind names a queue discipline; its String is tc's name.
type QueueKind = linkspec.QueueKind

// The queue disciplines.
const (
	QueueFIFO    = linkspec.FIFO
	QueueCoDel   = linkspec.CoDel
	QueueFQCoDel = linkspec.FQCoDel
)

// DefaultQueueLimit is the kernel's default packet limit of a queue
// discipline: 1000 for codel, 10240 for fq_codel.
func DefaultQueueLimit(kind QueueKind) int { return linkspec.DefaultQueueLimit(kind) }

// GE is netem's Gilbert-Elliott loss model (tc-netem's "loss gemodel p r
// 1-h 1-k"), each parameter in percent: from the good state the link
// moves to the bad one with probability P per packet and loses a packet
// with probability OneMinusK; from the bad state it moves back with
// probability R and loses with probability OneMinusH. With OneMinusH 100
// and OneMinusK 0 (the defaults) the mean loss is P/(P+R) and a burst of
// losses lasts 100/R packets on average: 1% loss in bursts of 3 is
// ge:0.3367/33.33, in bursts of 10 ge:0.101/10. MeanLoss gives the mean,
// in percent. Its String is the loss option's form, ge:p/r[/1-h[/1-k]].
type GE = linkspec.GE

// FourState is netem's 4-state loss model (tc-netem's "loss state p13 p31
// p32 p23 p14"), each parameter in percent. After a packet received in a
// gap (state 1) the next is a burst loss (state 3) with P13 or an isolated
// loss (state 4) with P14; after a burst loss the next ends the burst
// (state 1) with P31 or is received within it (state 2) with P32; after
// state 2 the next is a burst loss with P23; an isolated loss is always
// followed by state 1; otherwise the state stays. Packets in states 3 and
// 4 are lost; the chain starts in state 1. The option's defaults are
// tc's: P31 100-P13, P32 0, P23 100, P14 0, so state:P13 alone is
// independent loss of P13. MeanLoss gives the long-run loss, in percent.
// Its String is the loss option's form, state:p13/p31/p32/p23/p14; Netem
// gives the five probabilities as netem's u32 fractions (fields P13, P31,
// P32, P14, P23, netem's order), as the netem encoder and the model both use them.
type FourState = linkspec.FourState

// DirOptions are the options of one direction that differ from the base
// profile (the short form rtt_ms:rate_mbit[:loss_pct][@limit_pkts]), set
// one key at a time with Set (the keys are Options' and OptionKeys'), read
// with Value and Has, unset with Clear; IsZero reports that it sets
// nothing, and Apply sets what it sets in a Direction. The zero
// DirOptions means "as the base". It is a plain value, so a Profile stays
// comparable.
type DirOptions = linkspec.DirOptions

// Direction returns direction d of p with every setting resolved. A
// direction's limit is, in order: its own limit option; the base's limit
// when the short form names one (@limit_pkts); the discipline's default
// with a queue discipline; DefaultLimit of the direction's own rate and
// twice its own delay when either differs from the base; and otherwise
// the base's limit.
func (p Profile) Direction(d Dir) Direction {
	o := p.opts(d)
	dir := Direction{Delay: p.RTT / 2, RateMbit: p.RateMbit, LossPct: p.LossPct, Limit: p.Limit}
	o.Apply(&dir)
	switch {
	case o.Has("limit"):
	case p.Limit != DefaultLimit(p.RateMbit, p.RTT):
		// The short form named a limit: it holds for both directions.
	case dir.Queue.Managed():
		dir.Limit = DefaultQueueLimit(dir.Queue.Kind)
	case o.Has("delay") || o.Has("rate"):
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

// notOnNetem says why netem cannot build dirs (p's directions, loaded), or
// "" when it can (linkspec.NotOnNetem).
func notOnNetem(dirs [2]Direction) string {
	for _, d := range []Dir{Down, Up} {
		if why := linkspec.NotOnNetem(dirs[d]); why != "" {
			return fmt.Sprintf("the %s direction%s", d, why)
		}
	}
	return ""
}

// Marks reports whether a direction of p marks ECN-capable packets with
// CE (a queue discipline with ecn=on) rather than dropping them.
func (p Profile) Marks() bool {
	for _, d := range []Dir{Down, Up} {
		if q := p.Direction(d).Queue; q.Managed() && q.ECN {
			return true
		}
	}
	return false
}
