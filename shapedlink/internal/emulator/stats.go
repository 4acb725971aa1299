package emulator

import (
	"math"
	"math/bits"
	"time"
)

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
