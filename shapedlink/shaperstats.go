package shapedlink

import "time"

// ShaperStats is the userspace emulator's account of one direction since it
// started: what it forwarded and dropped, and how late it wrote frames
// against the model's due times. It tells a reader whether the emulator
// itself, rather than the configured link, shaped a run: socket drops,
// send errors or a lateness tail comparable to the delay mean the run
// measured the host, not the link.
type ShaperStats struct {
	Direction string `json:"direction"` // "server->client" or "client->server"
	Received  uint64 `json:"received"`
	Forwarded uint64 `json:"forwarded"`
	// ForwardedBytes is the frames' bytes (Ethernet header included, as
	// the rate counts them): what crossed the emulated wire.
	ForwardedBytes uint64 `json:"forwarded_bytes"`
	LossDrops      uint64 `json:"loss_drops"`     // the configured random loss
	LimitDrops     uint64 `json:"limit_drops"`    // the queue limit was full
	SocketDrops    uint64 `json:"socket_drops"`   // the kernel dropped frames before the shaper read them
	SendErrors     uint64 `json:"send_errors"`    // a write to the egress interface failed
	OversizeDrops  uint64 `json:"oversize_drops"` // frames larger than the MTU (an offload left on)
	// Duplicates counts frames the link duplicated (the dup option) and
	// Reordered frames it sent ahead of the delayed ones (reorder); the
	// copies are counted in Forwarded or the drops like any frame.
	Duplicates uint64 `json:"duplicates,omitempty"`
	Reordered  uint64 `json:"reordered,omitempty"`
	// With a queue discipline (the qdisc option): packets it dropped
	// because its limit was reached, packets CoDel dropped, and packets
	// CoDel marked CE instead of dropping (ecn=on).
	QueueDrops uint64 `json:"queue_drops,omitempty"`
	CoDelDrops uint64 `json:"codel_drops,omitempty"`
	ECNMarks   uint64 `json:"ecn_marks,omitempty"`
	// With a schedule: packets dropped while the direction was down, the
	// changes applied so far, and the longest the shaper took to get to
	// one after its time (the change itself applies at its time, to the
	// packets' arrival stamps).
	BlackoutDrops  uint64  `json:"blackout_drops,omitempty"`
	Changes        uint64  `json:"changes,omitempty"`
	MaxChangeLagMs float64 `json:"max_change_lag_ms,omitempty"`
	// Unstamped counts frames whose arrival time was taken when read
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
	// RcvBufBytes is the receive buffer of the shaper's socket on this
	// direction's ingress and SndBufBytes the send buffer on its egress,
	// as the kernel granted them (read back; the kernel reports twice the
	// size set). The shaper asks for 8 MiB; unprivileged, the kernel caps
	// that at net.core.rmem_max and wmem_max, and a small receive buffer
	// shows as SocketDrops when the shaper falls behind.
	RcvBufBytes uint64 `json:"rcvbuf_bytes"`
	SndBufBytes uint64 `json:"sndbuf_bytes"`
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
