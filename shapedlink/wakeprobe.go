package shapedlink

import (
	"slices"
	"time"
)

// WakeProbe is how late a thread woke for its timer with the CPUs
// otherwise idle, waiting as the emulator's threads wait (ProbeWake, for
// Options.EmulatorKeepAwakeAuto): Sleeps sleeps of SleepUs each, to a
// deadline, and the lateness of the wake-ups past it. KeepAwake is the decision: on when
// P99Ms exceeds LimitP99Ms or MaxMs exceeds LimitMaxMs.
type WakeProbe struct {
	Sleeps     int     `json:"sleeps"`
	SleepUs    int     `json:"sleep_us"`
	Scheduling string  `json:"scheduling"` // the probing thread's policy, as the emulator asks for it
	P50Ms      float64 `json:"p50_ms"`
	P99Ms      float64 `json:"p99_ms"`
	MaxMs      float64 `json:"max_ms"`
	LimitP99Ms float64 `json:"limit_p99_ms"`
	LimitMaxMs float64 `json:"limit_max_ms"`
	KeepAwake  bool    `json:"keep_awake"`
	TookMs     float64 `json:"took_ms"`
}

// The wake-up lateness above which the probe keeps the CPUs awake: the
// emulator's own lateness targets per link (docs/calibration.md), a
// fifth and twice the bench's ShaperLateLimit of 1 ms.
const (
	wakeLimitP99 = 200 * time.Microsecond
	wakeLimitMax = 2 * time.Millisecond
)

// The probe's shape: wakeSleeps sleeps of wakeSleep, about 0.35 s. A
// sleep is longer than the emulator's spin threshold, so it would sleep
// too, and short enough that a few hundred fit well under a second.
const (
	wakeSleeps = 300
	wakeSleep  = time.Millisecond
)

// keepAwakeFor is the probe's decision for the lateness p99 and max.
func keepAwakeFor(p99, max time.Duration) bool {
	return p99 > wakeLimitP99 || max > wakeLimitMax
}

// newWakeProbe summarises lateness (one per sleep, any order) and
// decides.
func newWakeProbe(lateness []time.Duration, sleep time.Duration, sched string, took time.Duration) WakeProbe {
	slices.Sort(lateness)
	q := func(f float64) time.Duration {
		if len(lateness) == 0 {
			return 0
		}
		return lateness[min(len(lateness)-1, int(f*float64(len(lateness))))]
	}
	p99, max := q(0.99), q(1)
	return WakeProbe{Sleeps: len(lateness), SleepUs: int(sleep / time.Microsecond), Scheduling: sched,
		P50Ms: msOf(q(0.5)), P99Ms: msOf(p99), MaxMs: msOf(max),
		LimitP99Ms: msOf(wakeLimitP99), LimitMaxMs: msOf(wakeLimitMax),
		KeepAwake: keepAwakeFor(p99, max), TookMs: msOf(took)}
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
