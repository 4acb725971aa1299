package shapedlink

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/emulator"
)

// Backend names what shapes the link.
type Backend string

const (
	// BackendAuto picks BackendNetem where the kernel has sch_netem and
	// BackendEmulator otherwise, and logs the choice.
	BackendAuto Backend = ""
	// BackendNetem shapes with one kernel netem qdisc on each veth end.
	BackendNetem Backend = "netem"
	// BackendEmulator shapes with a userspace emulator process in a third
	// namespace between the two ends.
	BackendEmulator Backend = "emulator"
	// BackendNone joins the two namespaces with a plain veth pair and no
	// shaping, the baseline of a calibration. The profile is recorded
	// but not applied.
	BackendNone Backend = "none"
	// BackendInProcess carries UDP datagrams between two in-process ends
	// through the emulator's model, on any system and with no privilege,
	// in a testing/synctest bubble's virtual time when run in one.
	// BackendAuto never chooses it.
	BackendInProcess Backend = "inproc"
)

// Mode names how the process got the privilege to build namespaces.
type Mode string

const (
	// ModeAuto is ModeRoot for root in the initial user namespace,
	// ModeUnprivileged inside a user namespace with CAP_SYS_ADMIN and
	// CAP_NET_ADMIN, and an error otherwise.
	ModeAuto Mode = ""
	// ModeRoot: the process is root on the host.
	ModeRoot Mode = "root"
	// ModeUnprivileged: the process runs as root of its own user
	// namespace, normally after Reexec.
	ModeUnprivileged Mode = "unprivileged"
	// ModeInProcess is the mode of every BackendInProcess link.
	ModeInProcess Mode = "in-process"
)

// Options are the choices New makes beyond the profile. The zero value
// picks everything automatically.
type Options struct {
	Backend Backend
	Mode    Mode
	// Seed seeds the link's random draws, Seed down and a value derived
	// from it up; zero draws one. netem takes it from Linux 6.6 on.
	// Applied and HostState say which seeds were in force.
	Seed uint64
	// Logger receives New's decisions at Info; nil discards them.
	Logger *slog.Logger
	// PacketTrace, for BackendInProcess only, is told of every datagram's
	// steps through the link (PacketEvent), from the link's goroutines,
	// in order within a direction; it must return quickly and must not
	// call the link.
	PacketTrace func(PacketEvent)
	// Offload is how the ends handle segmentation offload: OffloadWire
	// (wire-sized packets) or OffloadKeep (the kernel's offloads kept;
	// the emulator still judges each wire segment, netem each
	// super-packet as one packet). BackendInProcess refuses OffloadKeep.
	Offload OffloadMode
	// EmulatorLateMarker, for the emulator only, has each forwarding
	// thread write one line to the kernel trace marker
	// (/sys/kernel/tracing/trace_marker) the first time it sends a frame
	// later than this: "quicbench-late tid=T late_ns=N". Zero writes
	// none; New fails if the marker cannot be opened.
	EmulatorLateMarker time.Duration
	// EmulatorKeepAwake, for the emulator backend only, runs one busy
	// loop at the idle scheduling class (SCHED_IDLE) per CPU the emulator
	// may use, each pinned to its CPU, in a process of its own for as
	// long as the link is up, so those CPUs never halt: on a virtual
	// machine whose host is slow to resume a halted vCPU, that delay no
	// longer lands on the emulator's timer wake-ups. The price is every
	// such CPU at 100% (taken only when no other thread wants it).
	// HostState and ShaperStats list the CPUs kept awake. The other
	// backends refuse it; when BackendAuto chooses netem it is not used.
	// Commands leave it to EmulatorKeepAwakeAuto unless asked.
	EmulatorKeepAwake bool
	// EmulatorKeepAwakeAuto, for the emulator backend only, decides
	// EmulatorKeepAwake by measuring the host: before the first emulated
	// link of the process, ProbeWake (well under a second); the CPUs are
	// kept awake when its wake-ups were late by more than 0.2 ms at p99
	// or 2 ms at most. HostState.EmulatorWakeProbe records the probe and
	// the decision. Give it or EmulatorKeepAwake, not both.
	EmulatorKeepAwakeAuto bool
	// EmulatorDepartureWindow, for the emulator backend only, batches
	// departures on a busy link: when a held segment falls due, the
	// segments due within this window leave with it, up to the window
	// early, so a super-packet's consecutive segments go out as one
	// frame (fewer writes, and less of the receiving stack's work per
	// byte, at multi-gigabit rates with OffloadKeep). Only the time a
	// segment waited for the rate is cut: none leaves before its arrival,
	// the delay and its own serialisation, so a frame alone on the link,
	// or one just behind another, is never sent early. ShaperStats counts the early frames
	// (Early, EarlyMaxMs). Zero sends every segment at its due time; at
	// most 1 ms. The other backends refuse it; when BackendAuto chooses
	// netem it is not used. Commands use DefaultDepartureWindow.
	EmulatorDepartureWindow time.Duration
}

// The emulator settings a link gets unless told otherwise: the CPUs left
// to idle, and a 200 us departure window. The example commands (package
// linkflag's -keep-awake and -departure-window) take the window, and
// keep-awake auto (Options.EmulatorKeepAwakeAuto). docs/calibration.md
// has what each changes and costs.
const (
	DefaultKeepAwake       = false
	DefaultDepartureWindow = 200 * time.Microsecond
)

// MaxDepartureWindow bounds Options.EmulatorDepartureWindow.
const MaxDepartureWindow = emulator.MaxDepartureWindow

// LateMarkerPrefix starts every line Options.EmulatorLateMarker writes
// to the trace marker.
const LateMarkerPrefix = emulator.LateMarkerPrefix

// OffloadMode is how a link's ends handle segmentation offload (see
// Options.Offload).
type OffloadMode string

// The offload modes.
const (
	OffloadWire OffloadMode = ""     // wire-sized packets: offloads off
	OffloadKeep OffloadMode = "keep" // the kernel's offloads kept
)

// ParseOffloadMode reads "wire" (OffloadWire) or "keep" (OffloadKeep).
func ParseOffloadMode(s string) (OffloadMode, error) {
	switch s {
	case "wire":
		return OffloadWire, nil
	case "keep":
		return OffloadKeep, nil
	}
	return "", fmt.Errorf("%q is not an offload mode: use wire (devices pinned to wire-sized packets, as the bench runs) or keep (the ends keep segmentation offload)", s)
}

// String is the mode's name as ParseOffloadMode reads it.
func (m OffloadMode) String() string {
	if m == OffloadWire {
		return "wire"
	}
	return string(m)
}
