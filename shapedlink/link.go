package shapedlink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
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

// End is one end of the link; what acts on an end acts on what it sends.
type End int

const (
	ServerEnd End = iota // egress: server to client (Down)
	ClientEnd            // egress: client to server (Up)
)

// valid says why e is neither ServerEnd nor ClientEnd, or nil.
func (e End) valid() error {
	if e != ServerEnd && e != ClientEnd {
		return fmt.Errorf("shapedlink: %v is not an end; use ServerEnd or ClientEnd", e)
	}
	return nil
}

// dir is the direction whose traffic leaves through e.
func (e End) dir() Dir {
	if e == ClientEnd {
		return Up
	}
	return Down
}

func (e End) String() string {
	switch e {
	case ServerEnd:
		return "server"
	case ClientEnd:
		return "client"
	}
	return fmt.Sprintf("End(%d)", int(e))
}

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
	// Commands leave it off unless asked (DefaultKeepAwake).
	EmulatorKeepAwake bool
	// EmulatorDepartureWindow, for the emulator backend only, batches
	// departures on a busy link: when a held segment falls due, the
	// segments due within this window leave with it, up to the window
	// early, so a super-packet's consecutive segments go out as one
	// frame (fewer writes, and less of the receiving stack's work per
	// byte, at multi-gigabit rates with OffloadKeep). A frame alone on
	// the link is never sent early. ShaperStats counts the early frames
	// (Early, EarlyMaxMs). Zero sends every segment at its due time; at
	// most 1 ms. The other backends refuse it; when BackendAuto chooses
	// netem it is not used. Commands use DefaultDepartureWindow.
	EmulatorDepartureWindow time.Duration
}

// The emulator settings the example commands use unless told otherwise
// (package linkflag's -keep-awake and -departure-window): the CPUs left
// to idle, and a 200 us departure window, as measured best on this
// project's machines. docs/calibration.md has what each changes and
// costs.
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

// The ends' addresses, the same for every link (each has its own
// namespaces).
var (
	serverAddr = netip.MustParseAddr("198.18.0.1")
	clientAddr = netip.MustParseAddr("198.18.0.2")
)

// QueueSample is one poll of an end's egress queue: netem's backlog, or
// the emulator's queue and delay line, for every backend alike.
type QueueSample struct {
	At      time.Time `json:"at"`
	Packets int       `json:"packets"` // packets held (netem: queue plus delay line; with a queue discipline, its queue)
	Bytes   int       `json:"bytes"`   // bytes held, link-layer header included
	// Drops counts every packet this end's shaping dropped since the
	// link was built; the emulator splits them into LossDrops and
	// LimitDrops (zero with netem).
	Drops      uint64 `json:"drops"`
	LossDrops  uint64 `json:"loss_drops"`
	LimitDrops uint64 `json:"limit_drops"`
	// Flows are the emulator's fullest FQ-CoDel flow queues, at most 8.
	Flows []FlowSample `json:"flows,omitempty"`
}

// FlowSample is one FQ-CoDel flow queue's occupancy.
type FlowSample struct {
	Queue   int `json:"queue"` // the flow queue: the 5-tuple's hash modulo the flows
	Packets int `json:"packets"`
	Bytes   int `json:"bytes"`
}

// Counter is a packet and byte count from an nftables counter.
type Counter struct {
	Packets uint64 `json:"packets"`
	Bytes   uint64 `json:"bytes"`
}

// EgressCounters count what leaves one veth end at its nftables egress
// hook, before any qdisc and before software segmentation.
type EgressCounters struct {
	All Counter `json:"all"`
	// Oversize counts packets longer than one wire packet: super-packets.
	Oversize Counter `json:"oversize"`
}

// Link is a shaped link between a server and a client end. Build it with
// New, use Server and Client, check Err after a run, and Close it.
// Instruments has what a bench reads, Control what an experiment does to
// the path.
type Link struct {
	profile     Profile
	dirs        [2]Direction // resolved, schedules and traces loaded once
	backend     Backend
	mode        Mode
	offloadMode OffloadMode
	udpSegOff   bool // UDP segmentation offload off: the shaper cannot read it here (vnetCarriesUDPGSO)
	log         *slog.Logger

	server, client, shaperNS *Namespace

	shaper shaper
	// What the namespace backends build; zero in process.
	netemAvailable bool
	offload        []Offload
	counters       [2]*nftCounters

	closeMu sync.Mutex
	closed  bool
}

// New builds the link for p: namespaces, veths, addresses, offloads,
// counters and the shaping, or for BackendInProcess the two in-process
// ends. Off Linux only BackendInProcess works; the others return an error
// wrapping errors.ErrUnsupported. On error nothing New created is left.
func New(ctx context.Context, p Profile, opts Options) (*Link, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	switch opts.Backend {
	case BackendAuto, BackendNetem, BackendEmulator, BackendNone, BackendInProcess:
	default:
		return nil, fmt.Errorf("shapedlink: unknown backend %q; use %q, %q, %q (unshaped, a baseline), %q (in this process, datagrams only) or leave it empty to choose automatically",
			opts.Backend, BackendNetem, BackendEmulator, BackendNone, BackendInProcess)
	}
	if opts.PacketTrace != nil && opts.Backend != BackendInProcess {
		return nil, fmt.Errorf("shapedlink: Options.PacketTrace is for the %q backend, which carries the packets itself; with %q leave it nil (the namespace backends' packets are the kernel's)",
			BackendInProcess, opts.Backend)
	}
	switch {
	case opts.Offload != OffloadWire && opts.Offload != OffloadKeep:
		return nil, fmt.Errorf("shapedlink: unknown offload mode %q; use %q (wire-sized packets, the default) or %q (the kernel's offloads kept)", opts.Offload, "", OffloadKeep)
	case opts.Offload == OffloadKeep && opts.Backend == BackendInProcess:
		return nil, fmt.Errorf("shapedlink: Options.Offload %q is for links with devices; the %q backend carries whole datagrams and has none, so leave it empty", OffloadKeep, BackendInProcess)
	}
	if w := opts.EmulatorDepartureWindow; w < 0 || w > MaxDepartureWindow {
		return nil, fmt.Errorf("shapedlink: Options.EmulatorDepartureWindow is %v; give 0 (every segment at its due time) up to %v", w, MaxDepartureWindow)
	}
	if opts.EmulatorDepartureWindow != 0 && opts.Backend != BackendEmulator && opts.Backend != BackendAuto {
		return nil, fmt.Errorf("shapedlink: Options.EmulatorDepartureWindow batches the %q backend's departures; the %q backend has none to batch, so leave it 0 or use %q", BackendEmulator, opts.Backend, BackendEmulator)
	}
	if opts.EmulatorKeepAwake && opts.Backend != BackendEmulator && opts.Backend != BackendAuto {
		return nil, fmt.Errorf("shapedlink: Options.EmulatorKeepAwake keeps the CPUs awake for the %q backend's timers; the %q backend has none, so leave it false or use %q", BackendEmulator, opts.Backend, BackendEmulator)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var l *Link
	var err error
	if opts.Backend == BackendInProcess {
		l, err = newInProcess(p, opts, log)
	} else {
		l, err = newWithNamespaces(ctx, p, opts, log)
	}
	if err != nil {
		return nil, err
	}
	for _, a := range l.shaper.applied() {
		log.Info("shapedlink: shaping applied", "backend", l.backend, "link", a)
	}
	for _, o := range l.offload {
		log.Debug("shapedlink: offload read back", "end", o.String())
	}
	return l, nil
}

// Close stops the shaping and releases the ends, with the veths and
// nftables tables in them (a socket still open keeps its namespace, not
// the shaping); it waits up to 0.5 s for the kernel to tear them down.
// In process it closes every socket of both ends. Close is idempotent.
func (l *Link) Close() error {
	l.closeMu.Lock()
	if l.closed {
		l.closeMu.Unlock()
		return nil
	}
	l.closed = true
	l.closeMu.Unlock()
	var errs []error
	if l.shaper != nil {
		if err := l.shaper.close(); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, l.closeNamespaces()...)
	return errors.Join(errs...)
}

// Err reports why the link is no longer intact (the shaper process has
// exited, netem stopped following its schedule), or nil. Check it after
// every run.
func (l *Link) Err() error {
	l.closeMu.Lock()
	closed := l.closed
	l.closeMu.Unlock()
	if closed {
		return errors.New("shapedlink: the link was closed")
	}
	return l.shaper.err()
}

// Server is the server's end.
func (l *Link) Server() *Namespace { return l.server }

// Client is the client's end.
func (l *Link) Client() *Namespace { return l.client }

// Namespace is end e.
func (l *Link) Namespace(e End) *Namespace {
	if e == ClientEnd {
		return l.client
	}
	return l.server
}

// ServerAddr is the server end's IPv4 address (198.18.0.1).
func (l *Link) ServerAddr() netip.Addr { return serverAddr }

// ClientAddr is the client end's IPv4 address (198.18.0.2).
func (l *Link) ClientAddr() netip.Addr { return clientAddr }

// Profile is the profile the link was built for.
func (l *Link) Profile() Profile { return l.profile }

// Backend is the backend in use (never BackendAuto).
func (l *Link) Backend() Backend { return l.backend }

// Mode is the privilege mode the link was built in (never ModeAuto;
// ModeInProcess for BackendInProcess).
func (l *Link) Mode() Mode { return l.mode }

// Applied describes the shaping in force, one tc-like line per
// direction (netem's read back from the kernel).
func (l *Link) Applied() []string { return append([]string(nil), l.shaper.applied()...) }
