package shapedlink

import (
	"fmt"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// Dir is one direction of a link: Down (server to client) or Up. Its
// String is "down" or "up".
type Dir = linkspec.Dir

// The two directions.
const (
	Down = linkspec.Down
	Up   = linkspec.Up
)

// Direction is one direction of a link with every setting resolved
// (Profile.Direction). Fields: Delay, Jitter, JitterDist, JitterCorr,
// RateMbit, LossPct, LossCorr, GE with HasGE, FourState with HasFourState,
// DupPct, DupCorr, ReorderPct, ReorderCorr, ReorderGap, CorruptPct,
// CorruptCorr, Limit (packets, the delay line included), Queue, the
// Schedule and Trace specs, and Cross (the cross flows); a running link
// fills Changes, SchedulePeriod, TraceMs and Seed.
//
// Methods: Check and CheckLoaded return the option key a setting makes
// meaningless and why; Describe is its applied line; RateBits the rate in
// bit/s; HeldLimit the most packets it holds at once, MaxHeld the largest
// its schedule sets; Random whether it draws random numbers; JitterCDF
// the distribution of one frame's jitter.
type Direction = linkspec.Direction

// Queue is a direction's queue discipline, as tc-codel(8) and
// tc-fq_codel(8) describe it: Kind (QueueFIFO, the zero value, is netem's
// drop-tail), Target, Interval, Flows, Quantum and ECN; zero fields take
// the kernel's defaults, ECN is off unless set. Managed reports whether
// it is a discipline; Config is it as the emulator runs it.
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
// 1-h 1-k"), in percent: P and R are the chances of moving to the bad
// state and back, OneMinusK and OneMinusH the loss in the good and the bad
// state. With the defaults (1-h 100, 1-k 0) the mean loss is P/(P+R) in
// bursts of 100/R packets: 1% in bursts of 3 is ge:0.3367/33.33.
// MeanLoss is the long-run loss; String the option's form.
type GE = linkspec.GE

// FourState is netem's 4-state loss model (tc-netem's "loss state p13 p31
// p32 p23 p14"), each of P13, P31, P32, P23 and P14 in percent, with tc's
// defaults (docs/link-description.md has the chain). MeanLoss is the
// long-run loss; String the option's form; Netem the five as netem's u32
// fractions (fields P13, P31, P32, P14, P23).
type FourState = linkspec.FourState

// DirOptions are one direction's options beyond the short form (zero: as
// the short form), a comparable value. Set sets one key (OptionKeys),
// Value and Has read one, Clear unsets, IsZero reports that none is set,
// Apply writes them into a Direction.
type DirOptions = linkspec.DirOptions

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
