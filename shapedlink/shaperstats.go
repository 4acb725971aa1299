package shapedlink

import (
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// ShaperStats is the emulator's (or the in-process link's) account of one
// direction since it started: its ShaperCounters and figures read from
// them. Socket drops, send errors or a lateness tail comparable to the
// delay mean the host, not the link, shaped the run (Distorted).
type ShaperStats struct {
	Direction string `json:"direction"` // "server->client" or "client->server"
	ShaperCounters
	// MaxChangeLagMs is the longest the shaper took to get to a
	// scheduled change after its time.
	MaxChangeLagMs float64 `json:"max_change_lag_ms,omitempty"`
	// Unstamped counts wire packets stamped when read, not by the kernel.
	Unstamped uint64 `json:"unstamped"`
	// LateP50Ms and LateP99Ms bound from above how late frames were
	// written against their due times (at most 12.5% or 1 us over);
	// LateMaxMs is the largest lateness seen.
	LateP50Ms float64 `json:"late_p50_ms"`
	LateP99Ms float64 `json:"late_p99_ms"`
	LateMaxMs float64 `json:"late_max_ms"`
	// EarlyMaxMs is the most a frame was sent ahead of its due time
	// (Options.EmulatorDepartureWindow); zero without a window.
	EarlyMaxMs float64 `json:"early_max_ms,omitempty"`
}

// ShaperCounters are a userspace shaper's counters of one direction, in
// wire segments and whole Ethernet frames' bytes. Packets, Bytes and
// Queued are held now; the rest count up: Received, Forwarded and
// ForwardedBytes; the drops (LossDrops, LimitDrops, SocketDrops,
// SendErrors, OversizeDrops, UnreadableDrops, and in process
// ChecksumDrops and NoSocketDrops); SuperPacketsIn, SuperPacketsOut,
// JudgedWhole and FramesOut; Duplicates, Reordered, Corrupted; the queue
// discipline's QueueDrops, CoDelDrops and ECNMarks; the schedule's
// BlackoutDrops, Changes and MaxChangeLagNanos; lateness (LateNanos,
// MaxLateNanos, the histogram Late, Stamped) and departures early within
// the departure window (Early, MaxEarlyNanos); RcvBufBytes and
// SndBufBytes as granted. Drops is every drop, LateQuantile bounds a
// lateness quantile, and Words is the counters as the emulator publishes
// them.
type ShaperCounters = linkspec.Counters

// newShaperStats reads the figures of a direction's counters.
func newShaperStats(direction string, c linkspec.Counters) ShaperStats {
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	return ShaperStats{
		Direction: direction, ShaperCounters: c,
		MaxChangeLagMs: float64(c.MaxChangeLagNanos) / 1e6,
		Unstamped:      c.Received - min(c.Stamped, c.Received),
		LateP50Ms:      ms(min(c.LateQuantile(0.5), time.Duration(c.MaxLateNanos))),
		LateP99Ms:      ms(min(c.LateQuantile(0.99), time.Duration(c.MaxLateNanos))),
		LateMaxMs:      ms(time.Duration(c.MaxLateNanos)),
		EarlyMaxMs:     ms(time.Duration(c.MaxEarlyNanos)),
	}
}

// ShaperReport is the emulator's scheduling priority (and memory
// locking) as applied, both directions' counters, server->client first,
// the emulator process's garbage collection since it started forwarding
// (nil where there is no emulator process), and the CPUs kept awake for
// it (Options.EmulatorKeepAwake; empty when off) and its departure
// window (Options.EmulatorDepartureWindow; zero when off).
type ShaperReport struct {
	Priority          string        `json:"priority"`
	Directions        []ShaperStats `json:"directions"`
	GC                *ShaperGC     `json:"gc,omitempty"`
	KeepAwakeCPUs     []int         `json:"keep_awake_cpus,omitempty"`
	DepartureWindowMs float64       `json:"departure_window_ms,omitempty"`
}

// ShaperGC is the emulator process's garbage collection since it started
// forwarding: the cycles run and an upper bound on the longest pause. The
// emulator turns its collector off then, so both should be zero.
type ShaperGC struct {
	Cycles     uint64  `json:"cycles"`
	PauseMaxMs float64 `json:"pause_max_ms"`
}

// Distorted says why the emulator, not the model, lost or delayed traffic
// (a socket drop, a send error, p99 lateness above lateLimit), or "".
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
