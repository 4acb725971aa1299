package shapedlink

import (
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// ShaperStats is the userspace emulator's (or the in-process link's)
// account of one direction since it started: what it forwarded and
// dropped, and how late it wrote frames against the model's due times. It
// tells a reader whether the emulator itself, rather than the configured
// link, shaped a run: socket drops, send errors or a lateness tail
// comparable to the delay mean the run measured the host, not the link.
// (In a synctest bubble the in-process link is never late.)
//
// Its counters are the shaper's own (ShaperCounters, which lists them),
// embedded as the shaper publishes them; the fields below are read from
// them.
type ShaperStats struct {
	Direction string `json:"direction"` // "server->client" or "client->server"
	ShaperCounters
	// MaxChangeLagMs is the longest the shaper took to get to a
	// scheduled change after its time (the change itself applies at its
	// time, to the packets' arrival stamps).
	MaxChangeLagMs float64 `json:"max_change_lag_ms,omitempty"`
	// Unstamped counts wire packets whose arrival time was taken when read
	// rather than from the kernel's receive timestamp.
	Unstamped uint64 `json:"unstamped"`
	// LateP50Ms and LateP99Ms are upper bounds on how long after its due
	// time a frame was written, from a log-linear histogram (1 us buckets
	// below 16 us, then 8 per power of two): each is at most 12.5% (or
	// 1 us) above the true percentile. LateMaxMs is the largest lateness
	// seen.
	LateP50Ms float64 `json:"late_p50_ms"`
	LateP99Ms float64 `json:"late_p99_ms"`
	LateMaxMs float64 `json:"late_max_ms"`
}

// ShaperCounters are a userspace shaper's counters of one direction, as
// it publishes them: received, forwarded and dropped by cause, the queue
// discipline's and the schedule's, the lateness histogram and the socket
// buffers granted. Bytes count whole Ethernet frames; Packets, Bytes and
// Queued are gauges (held now), the rest count up from the start:
//
//   - Packets, Bytes: the frames held now, queue and delay line.
//   - Received, Forwarded, ForwardedBytes: wire packets read and written
//     (a super-packet counts as its wire segments).
//   - LossDrops, LimitDrops: the random loss, the full limit.
//   - SocketDrops: dropped before the shaper read them (a full receive
//     buffer; in process, a full socket queue). SendErrors: writes that
//     failed. OversizeDrops: frames larger than the frame buffer.
//   - SuperPacketsIn, SuperPacketsOut: super-packets of more than one
//     wire segment read and written. UnreadableDrops: frames the kernel
//     dropped as they were read, their offload not describable (UDP GSO
//     before Linux 6.2). JudgedWhole: super-packets that could not be cut
//     into wire segments, judged and sent whole.
//   - Duplicates, Reordered: the dup and reorder options.
//   - QueueDrops, CoDelDrops, ECNMarks, Queued: the queue discipline's
//     drops by its limit and by CoDel, CE marks, packets queued now.
//   - BlackoutDrops, Changes, MaxChangeLagNanos: the schedule's drops
//     while down, changes applied, and the longest the shaper took to get
//     to one.
//   - Corrupted: frames sent with a bit flipped; ChecksumDrops and
//     NoSocketDrops: in process, corrupted datagrams the receiver's
//     checksum dropped and datagrams no socket was bound for.
//   - LateNanos, MaxLateNanos, Late: the sum, the largest and a
//     log-linear histogram of how late frames were written; Stamped:
//     wire packets stamped by the kernel on arrival.
//   - RcvBufBytes, SndBufBytes: the shaper's socket buffers as granted.
//
// Drops is every drop, for any reason; LateQuantile an upper bound on a
// quantile of the lateness from Late; Words views the counters as the
// 64-bit words the emulator publishes.
type ShaperCounters = linkspec.Counters

// newShaperStats reads the figures of a direction's counters.
func newShaperStats(direction string, c linkspec.Counters) ShaperStats {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return ShaperStats{
		Direction: direction, ShaperCounters: c,
		MaxChangeLagMs: float64(c.MaxChangeLagNanos) / 1e6,
		Unstamped:      c.Received - min(c.Stamped, c.Received),
		// A bucket's upper edge can lie above the largest lateness seen;
		// the maximum is then the tighter bound.
		LateP50Ms: ms(min(c.LateQuantile(0.5), time.Duration(c.MaxLateNanos))),
		LateP99Ms: ms(min(c.LateQuantile(0.99), time.Duration(c.MaxLateNanos))),
		LateMaxMs: ms(time.Duration(c.MaxLateNanos)),
	}
}

// ShaperReport is the emulator's scheduling priority as applied and both
// directions' counters, server->client first.
type ShaperReport struct {
	Priority   string        `json:"priority"`
	Directions []ShaperStats `json:"directions"`
}

// Distorted returns a reason when the counters say the emulator, not the
// model, lost or delayed traffic: any socket drop or send error, or a 99th
// percentile lateness above lateLimit. It returns "" for a clean report.
func (r ShaperReport) Distorted(lateLimit time.Duration) string {
	for _, d := range r.Directions {
		switch {
		case d.SocketDrops > 0:
			return d.Direction + ": the kernel dropped frames before the shaper read them"
		case d.SendErrors > 0:
			return d.Direction + ": writes to the egress interface failed"
		case d.LateP99Ms > float64(lateLimit)/float64(time.Millisecond):
			return d.Direction + ": the shaper's 99th percentile lateness exceeded " + lateLimit.String()
		}
	}
	return ""
}
