package linkspec

import (
	"math"
	"math/bits"
	"time"
	"unsafe"
)

// Counters are one direction's account as a userspace carrier of the
// link keeps it (the emulator's forwarding loop, with its model's
// decisions): what it received, forwarded and dropped by cause, and how
// late it wrote frames against their due times. Packets, Bytes and Queued
// are gauges (what is held right now); the rest count up from the
// carrier's start. Bytes count whole Ethernet frames, header included.
//
// It is the one struct from the carrier to the record: the emulator
// publishes it word for word through its shared page, and
// shapedlink.ShaperStats embeds it, with these JSON names.
type Counters struct {
	Packets uint64 `json:"-"` // frames held now, the queue and the delay line
	Bytes   uint64 `json:"-"` // bytes held now

	// Received counts the wire packets read from the ingress interface
	// and Forwarded those written to the egress interface: a
	// segmentation-offload super-packet counts as its wire segments, so
	// both count what crossed the emulated wire whatever the offloads.
	Received  uint64 `json:"received"`
	Forwarded uint64 `json:"forwarded"`
	// ForwardedBytes is the frames' bytes (Ethernet header included, as
	// the rate counts them): what crossed the emulated wire.
	ForwardedBytes uint64 `json:"forwarded_bytes"`
	LossDrops      uint64 `json:"loss_drops"`  // the configured random loss
	LimitDrops     uint64 `json:"limit_drops"` // the limit was full
	// SocketDrops: the kernel dropped frames before the shaper read them
	// (receive buffer full); for the in-process link, datagrams dropped
	// because the receiving socket's queue was full.
	SocketDrops   uint64 `json:"socket_drops"`
	SendErrors    uint64 `json:"send_errors"`    // a write to the egress interface failed (frame lost)
	OversizeDrops uint64 `json:"oversize_drops"` // larger than the frame buffer (an offload left on)
	// SuperPacketsIn counts the frames read that were segmentation-offload
	// super-packets of more than one wire segment, and SuperPacketsOut the
	// frames written that carried more than one (consecutive segments due
	// together leave as one frame). Both stay zero with wire-sized
	// devices.
	SuperPacketsIn  uint64 `json:"super_packets_in,omitempty"`
	SuperPacketsOut uint64 `json:"super_packets_out,omitempty"`
	// FramesOut counts the frames written to the egress interface, a
	// super-packet once (the emulator; equal to Forwarded when no frame
	// carried more than one segment).
	FramesOut uint64 `json:"frames_out,omitempty"`
	// UnreadableDrops counts frames the kernel dropped as the carrier read
	// them because it could not describe their offload in a virtio-net
	// header (a UDP GSO super-packet before Linux 6.2, where shapedlink
	// turns UDP segmentation offload off at the ends so none is sent);
	// they are not in Received.
	UnreadableDrops uint64 `json:"unreadable_drops,omitempty"`
	// JudgedWhole counts the super-packets read that could not be cut
	// into wire segments (package segment refused their headers: an
	// in-band VLAN tag, an IPv6 extension header, a tunnel, a header that
	// does not parse), each judged and sent whole as one segment of its
	// full length; they count once in Received.
	JudgedWhole uint64 `json:"judged_whole,omitempty"`
	// Duplicates counts frames the link duplicated (the dup option) and
	// Reordered frames it sent ahead of the delayed ones (reorder); the
	// copies are counted in Forwarded or the drops like any frame.
	Duplicates uint64 `json:"duplicates,omitempty"`
	Reordered  uint64 `json:"reordered,omitempty"`
	// With a queue discipline (the qdisc option): packets it dropped
	// because its limit was reached, packets CoDel dropped, packets CoDel
	// marked CE instead (ecn=on), and the packets waiting in the queue now
	// (a gauge, part of Packets).
	QueueDrops uint64 `json:"queue_drops,omitempty"`
	CoDelDrops uint64 `json:"codel_drops,omitempty"`
	ECNMarks   uint64 `json:"ecn_marks,omitempty"`
	Queued     uint64 `json:"-"`
	// With a schedule: packets dropped while the direction was down, and
	// the changes applied so far; MaxChangeLagNanos is the longest the
	// carrier took to get to one after its time (the change itself
	// applies at its time, to the frames' arrival stamps; the lag only
	// delays when it is counted).
	BlackoutDrops     uint64 `json:"blackout_drops,omitempty"`
	Changes           uint64 `json:"changes,omitempty"`
	MaxChangeLagNanos uint64 `json:"-"`
	// Corrupted counts frames the link sent on with a bit flipped (the
	// corrupt option). The in-process link, its own receiver, also counts
	// ChecksumDrops, the corrupted datagrams it dropped as the receiver's
	// checksum would, and NoSocketDrops, datagrams for an address and
	// port no socket was bound to; behind the emulator the receiving
	// kernel drops both (its UDP InCsumErrors and NoPorts), and these
	// stay zero.
	Corrupted     uint64 `json:"corrupted,omitempty"`
	ChecksumDrops uint64 `json:"checksum_drops,omitempty"`
	NoSocketDrops uint64 `json:"no_socket_drops,omitempty"`

	// LateNanos is the sum over forwarded frames of how long after its
	// due time each was written; MaxLateNanos the largest. They measure
	// the carrier's timing error, not the model's.
	LateNanos    uint64 `json:"-"`
	MaxLateNanos uint64 `json:"-"`
	// Late is a histogram of the same lateness, log-linear in whole
	// microseconds: Late[i] for i < 16 counts frames late by [i, i+1) us
	// (Late[0] those written less than 1 us after their due time); above
	// that each power of two [2^e, 2^(e+1)) us, 4 <= e <= 19, is split
	// into 8 equal buckets of 2^(e-3) us, so no bucket is wider than 1/8
	// (12.5%) of its lower edge; the last bucket, Late[lateBuckets-1],
	// counts everything late by 2^20 us (1.048576 s) or more.
	// LateBucket maps a lateness to its bucket, lateBucketEdges gives a
	// bucket's edges.
	Late [lateBuckets]uint64 `json:"-"`
	// Early counts the forwarded frames written before their due time,
	// within the emulator's departure window and never before their due
	// time on an idle link (counted in Late[0] too), and
	// MaxEarlyNanos is the most any was early.
	Early         uint64 `json:"early,omitempty"`
	MaxEarlyNanos uint64 `json:"-"`
	// Stamped counts received wire packets whose arrival time came from the
	// kernel's receive timestamp; the rest (Received - Stamped) were
	// stamped when read, which adds the thread's wake-up latency.
	Stamped uint64 `json:"-"`

	// RcvBufBytes is the receive buffer of the carrier's socket on this
	// direction's ingress and SndBufBytes the send buffer on its egress,
	// as the kernel granted them (read back with getsockopt; the kernel
	// reports twice the size set, so a granted 8 MiB reads as 16 MiB).
	// The shaper asks for 8 MiB; unprivileged, the kernel caps that at
	// net.core.rmem_max and wmem_max, and a small receive buffer shows as
	// SocketDrops when the shaper falls behind. Zero until it is ready.
	RcvBufBytes uint64 `json:"rcvbuf_bytes"`
	SndBufBytes uint64 `json:"sndbuf_bytes"`
}

// CounterWords is the size of Counters in 64-bit words: every field is a
// uint64 (or an array of them), so a Counters can be published word by
// word (the emulator's shared page does).
const CounterWords = int(unsafe.Sizeof(Counters{}) / 8)

// Words views c as its words, for publishing with atomic stores.
func (c *Counters) Words() *[CounterWords]uint64 {
	return (*[CounterWords]uint64)(unsafe.Pointer(c))
}

// The lateness histogram (Counters.Late) is log-linear, in the manner of
// HdrHistogram: lateSub linear buckets per power of two of microseconds,
// exact (1 us wide) below 2*lateSub us, up to 2^lateTopBits us, then one
// overflow bucket.
const (
	lateSubBits = 3                // log2 of the buckets per power of two
	lateSub     = 1 << lateSubBits // buckets per power of two: 8, so at most 12.5% wide
	lateTopBits = 20               // the overflow bucket starts at 2^20 us (1.048576 s)

	// lateBuckets is the number of buckets in Counters.Late (145): 16
	// exact 1-us buckets for 0-15 us, 8 for each power of two from
	// [16, 32) us to [2^19, 2^20) us, and the overflow bucket.
	lateBuckets = (lateTopBits-lateSubBits+1)<<lateSubBits + 1
)

// LateBucket returns the index in Counters.Late of a frame late by nanos
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
		return lateBuckets - 1
	}
	return k<<lateSubBits + int(us>>k)
}

// lateBucketEdges returns bucket i's edges in nanoseconds: it counts the
// lateness in [lo, hi). The overflow bucket, lateBuckets-1, has no upper
// edge; hi is math.MaxUint64 for it.
func lateBucketEdges(i int) (lo, hi uint64) {
	if i >= lateBuckets-1 {
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
// edge of the bucket it falls in (see Counters.Late: at most 12.5% or
// 1 us above the true value), or MaxLateNanos if that is smaller and lies
// in the same bucket, so the 1-quantile is exact. For the overflow bucket,
// which has no upper edge, it is MaxLateNanos. (The shaper publishes
// MaxLateNanos after each batch and the buckets per frame, so a reader
// may see a MaxLateNanos below the quantile's bucket; it is then ignored,
// and for the overflow bucket its lower edge, 2^20 us, is returned.) It
// returns 0 when nothing was forwarded.
func (s Counters) LateQuantile(q float64) time.Duration {
	var total uint64
	for _, c := range s.Late {
		total += c
	}
	if total == 0 {
		return 0
	}
	need := uint64(math.Ceil(q * float64(total)))
	i := lateBuckets - 1
	var seen uint64
	for j, c := range s.Late {
		seen += c
		if seen >= need && c > 0 {
			i = j
			break
		}
	}
	lo, hi := lateBucketEdges(i)
	switch {
	case s.MaxLateNanos >= lo && s.MaxLateNanos < hi:
		return time.Duration(s.MaxLateNanos)
	case i == lateBuckets-1:
		return time.Duration(lo) // MaxLateNanos lags the histogram
	}
	return time.Duration(hi)
}

// Drops is every frame this direction dropped, for any reason.
func (s Counters) Drops() uint64 {
	return s.LossDrops + s.LimitDrops + s.OversizeDrops + s.SendErrors + s.SocketDrops + s.BlackoutDrops
}
