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
// Its counters are the shaper's own (Received, Forwarded, ForwardedBytes,
// LossDrops, LimitDrops, SocketDrops, SendErrors, OversizeDrops,
// Duplicates, Reordered, QueueDrops, CoDelDrops, ECNMarks, BlackoutDrops,
// Changes, Corrupted, ChecksumDrops, NoSocketDrops, RcvBufBytes,
// SndBufBytes and the lateness histogram Late),
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
// buffers granted.
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
