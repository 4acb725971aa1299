package emulator

import (
	"errors"
	"fmt"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// Config is one shaper: two interfaces in the shaper's network namespace
// and the link in each direction. A is the server side, B the client side:
// AToB shapes frames that arrive on IfA and leave on IfB.
type Config struct {
	IfA, IfB   string
	AToB, BToA linkspec.Direction // resolved and loaded, seeds drawn (Command draws a zero one)
	// SpinThreshold is how long before a frame's due time the forwarding
	// thread stops sleeping and spins on the clock (still reading its
	// socket). Zero means defaultSpinThreshold; a negative value never
	// spins (lowest CPU; the timer's wake-up latency is then added to
	// every frame). Spinning is capped at a quarter of each 10 ms, so a
	// high packet rate falls back to timer wake-ups rather than a thread
	// that never sleeps.
	SpinThreshold time.Duration
	// Nice is the nice value for the two forwarding threads; 0 leaves
	// them at the shaper's inherited priority. A negative value (e.g.
	// defaultNice) needs CAP_SYS_NICE; when it cannot be applied the
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
	// KeepOffload says the devices keep their segmentation offloads, so
	// super-packets arrive: every frame buffer is then sized for a
	// 64 KiB one. The forwarding loop cuts any super-packet into its wire
	// segments whatever this says (package segment).
	KeepOffload bool
	// LateMarker, when positive, has each forwarding thread write one
	// line to the kernel's trace marker (traceMarker) the first time it
	// sends a frame later than this: "quicbench-late tid=T late_ns=N",
	// T the thread's id. A tracing session can stop on it (a traceoff
	// trigger) to catch what delayed the thread. The shaper fails to
	// start if it cannot open the marker.
	LateMarker time.Duration
	// DepartureWindow batches departures on a busy link: when a held
	// segment falls due, every segment due within this window after the
	// loop's time leaves with it, up to the window early, so consecutive
	// segments of one super-packet go out as one frame instead of one per
	// wake-up. A segment never leaves early unless one ahead of it is due,
	// and never before it would have been due on an idle link (only its
	// wait for the rate is cut), so no round trip is shorter than the
	// link's. Early departures are
	// counted (linkspec.Counters.Early). Zero sends each segment at its
	// due time; at most MaxDepartureWindow.
	DepartureWindow time.Duration
}

// MaxDepartureWindow bounds Config.DepartureWindow: a millisecond early is
// already a tenth of a 10 ms round trip.
const MaxDepartureWindow = time.Millisecond

// traceMarker is the kernel trace marker LateMarker writes to (tracefs
// mounted at its usual place).
const traceMarker = "/sys/kernel/tracing/trace_marker"

// LateMarkerPrefix starts every line LateMarker writes.
const LateMarkerPrefix = "quicbench-late"

// defaultSpinThreshold is the spin stretch used when Config.SpinThreshold
// is zero. On the 2-core VM this was measured on, a SCHED_FIFO thread's
// ppoll wake-up was up to a few hundred microseconds late under load; at
// 150 us a quarter of idle echoes' frames still left 64-512 us late, at
// 400 us one in ten.
const defaultSpinThreshold = 300 * time.Microsecond

// validate reports the first thing wrong with c, naming the field: the
// interfaces, the priority, and each direction by linkspec's one check of
// a direction (the same the profile passed when it was parsed).
func (c Config) validate() error {
	if c.IfA == "" || c.IfB == "" {
		return errors.New("emulator: Config.IfA and Config.IfB must name the two interfaces in the shaper namespace")
	}
	if c.LateMarker < 0 {
		return fmt.Errorf("emulator: Config.LateMarker is %v; give a positive lateness, or 0 for no marker", c.LateMarker)
	}
	if c.DepartureWindow < 0 || c.DepartureWindow > MaxDepartureWindow {
		return fmt.Errorf("emulator: Config.DepartureWindow is %v; give 0 (each segment at its due time) up to %v", c.DepartureWindow, MaxDepartureWindow)
	}
	if c.Nice < -20 || c.Nice > 19 {
		return fmt.Errorf("emulator: Config.Nice is %d; nice values run from -20 to 19", c.Nice)
	}
	if c.IfA == c.IfB {
		return fmt.Errorf("emulator: Config.IfA and Config.IfB are both %q; the shaper needs two different interfaces", c.IfA)
	}
	for _, x := range []struct {
		name string
		d    linkspec.Direction
	}{{"AToB", c.AToB}, {"BToA", c.BToA}} {
		if key, why := x.d.CheckLoaded(); why != "" {
			return fmt.Errorf("emulator: Config.%s: %s %s", x.name, key, why)
		}
	}
	return nil
}

// describe renders d as the emulator's applied line, for example
// "emulator delay 40ms rate 10Mbit limit 110 loss 1% seed 7".
func describe(d linkspec.Direction) string { return "emulator " + d.Describe() }
