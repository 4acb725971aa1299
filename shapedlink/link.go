package shapedlink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"sync"
	"time"
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
	// BackendNone joins the two namespaces with a plain veth pair, with
	// the same addresses and offload settings and no shaping at all: the
	// baseline a calibration compares a shaped link against (what the
	// machine itself adds to a round trip or takes from a flow's rate).
	// The profile is recorded but not applied.
	BackendNone Backend = "none"
	// BackendInProcess carries the link inside this process, on every
	// operating system and with no privilege: no namespace, veth or
	// socket, but the emulator's model between two ends whose UDP sockets
	// (Namespace.ListenPacket) are in-process net.PacketConns. It reads
	// the time only from the time package, so inside a testing/synctest
	// bubble it runs in the bubble's virtual time, and the same seeds and
	// the same writes give the same packets at the same times. It carries
	// datagrams only. BackendAuto never chooses it, since it changes what
	// the ends' sockets are. See the package doc's "In process".
	BackendInProcess Backend = "inproc"
)

// Mode names how the process got the privilege to build namespaces.
type Mode string

const (
	// ModeAuto is ModeRoot for root in the initial user namespace,
	// ModeUnprivileged inside a user namespace with CAP_SYS_ADMIN and
	// CAP_NET_ADMIN, and an error saying what to do otherwise.
	ModeAuto Mode = ""
	// ModeRoot: the process is root on the host.
	ModeRoot Mode = "root"
	// ModeUnprivileged: the process runs as root of its own user
	// namespace, normally after Reexec.
	ModeUnprivileged Mode = "unprivileged"
	// ModeInProcess is the mode of every BackendInProcess link, which
	// needs no privilege at all.
	ModeInProcess Mode = "in-process"
)

// End is one end of the link. A qdisc, sampler or egress filter on an end
// acts on the packets that end sends.
type End int

const (
	// ServerEnd is the server namespace's veth; its egress is the
	// server-to-client direction.
	ServerEnd End = iota
	// ClientEnd is the client namespace's veth; its egress is the
	// client-to-server direction.
	ClientEnd
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
	// Seed seeds the link's random draws (loss, jitter, duplication,
	// reordering): the server-to-client direction gets Seed, the other
	// direction a value derived from it. Zero means a random seed. The
	// emulator and the in-process link always honour it; kernel netem
	// takes it as TCA_NETEM_PRNG_SEED on Linux 6.6 and later and ignores
	// it before.
	// Applied and HostState say which seeds were in force, or that
	// netem's draws cannot be repeated on this kernel.
	Seed uint64
	// Logger receives one line per decision (backend chosen, shaping as
	// applied), at Info. Nil discards them; Applied and Backend say the
	// same after New returns.
	Logger *slog.Logger
	// PacketTrace, for BackendInProcess only, is told of every datagram's
	// steps through the link (PacketEvent): when it was written and what
	// the model decided, and when it left the link and where it went. It
	// is called from the link's goroutines, in order within a direction,
	// the two directions possibly at once; it must return quickly and
	// must not call the link. Other backends refuse it.
	PacketTrace func(PacketEvent)
	// Offload is how the ends handle segmentation offload: OffloadWire
	// (the zero value) pins every device to wire-sized packets, so every
	// queue and counter sees one wire packet per frame, which is what the
	// bench's offload evidence reads; OffloadKeep leaves the devices'
	// offloads as the kernel has them (TSO, GSO, checksum offload), so
	// senders hand over super-packets, as on a real host, and a link can
	// carry gigabits. The emulator still judges every wire segment of a
	// super-packet on its own (see the package doc); netem, as the
	// kernel's, judges a super-packet as one packet, and says so in its
	// applied line. examples/overlink defaults to OffloadKeep. The
	// in-process backend has no devices and refuses OffloadKeep.
	Offload OffloadMode
}

// OffloadMode is how a link's ends handle segmentation offload (see
// Options.Offload).
type OffloadMode string

// The offload modes.
const (
	OffloadWire OffloadMode = ""     // wire-sized packets: offloads off
	OffloadKeep OffloadMode = "keep" // the kernel's offloads kept
)

// ParseOffloadMode reads a mode as a command line or a record names it:
// "wire" (OffloadWire) or "keep" (OffloadKeep). Anything else is an error
// that names both; a command prefixes it with its flag ("-offload ").
func ParseOffloadMode(s string) (OffloadMode, error) {
	switch s {
	case "wire":
		return OffloadWire, nil
	case "keep":
		return OffloadKeep, nil
	}
	return "", fmt.Errorf("%q is not an offload mode: use wire (devices pinned to wire-sized packets, as the bench runs) or keep (the ends keep segmentation offload)", s)
}

// String is the mode's name as ParseOffloadMode reads it: "wire" or
// "keep".
func (m OffloadMode) String() string {
	if m == OffloadWire {
		return "wire"
	}
	return string(m)
}

// Fixed addresses (the device names are in link_linux.go). Each link lives
// in namespaces of its own (or, in process, in its own ends), so the same
// names and addresses never collide between links.
var (
	serverAddr = netip.MustParseAddr("198.18.0.1")
	clientAddr = netip.MustParseAddr("198.18.0.2")
)

// QueueSample is one poll of an end's egress queue: the kernel netem
// qdisc's backlog, or the emulator's queue and delay line for that
// direction. Both backends produce the same type, so consumers need not
// know which ran.
type QueueSample struct {
	At      time.Time `json:"at"`
	Packets int       `json:"packets"` // packets held (netem: queue plus delay line; with a queue discipline, its queue)
	Bytes   int       `json:"bytes"`   // bytes held, link-layer header included
	// Drops counts, since the link was built, every packet this end's
	// shaping dropped.
	Drops uint64 `json:"drops"`
	// LossDrops and LimitDrops split Drops by cause where the backend can
	// tell them apart (the emulator); with netem they are zero.
	LossDrops  uint64 `json:"loss_drops"`
	LimitDrops uint64 `json:"limit_drops"`
	// Flows are the fullest FQ-CoDel flow queues (at most 8, fullest
	// first), for the emulator; empty otherwise.
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

// EgressCounters count what leaves one veth end, as its nftables netdev
// egress hook sees it: before any qdisc and before software segmentation,
// so a UDP_SEGMENT super-packet is seen as one packet longer than one wire
// packet. In JSON its keys are snake_case like the rest of a record's;
// records written before they had tags ("All", "Packets") still decode,
// encoding/json matching keys without regard to case.
type EgressCounters struct {
	All Counter `json:"all"`
	// Oversize counts packets longer than one wire packet (MTU plus the
	// 14-byte Ethernet header): GSO or GRO super-packets.
	Oversize Counter `json:"oversize"`
}

// Link is a shaped link between a server and a client end. Build it with
// New, make sockets and start programs in Server and Client, check Err
// after a run, and release it with Close. What a bench reads about the
// link while it runs (queue samples, counters, the host state) is grouped
// under Instruments, and what an experiment does to the path (blocking
// UDP, moving the client's address) under Control.
//
// The ends are network namespaces joined by veths for every backend but
// BackendInProcess, whose ends are in this process and make only UDP
// sockets (see the package doc's "In process").
type Link struct {
	profile Profile
	dirs    [2]Direction // resolved, schedules and traces loaded once
	backend Backend
	mode    Mode
	// offloadMode is Options.Offload (OffloadWire or OffloadKeep).
	offloadMode OffloadMode
	// udpSegOff says the ends' UDP segmentation offload was turned off
	// because the shaper's packet sockets cannot carry it on this kernel
	// (see vnetCarriesUDPGSO).
	udpSegOff bool
	log       *slog.Logger

	server, client, shaperNS *Namespace

	shaper shaper
	// What the namespace backends build (topology_linux.go): whether
	// netem exists, the offloads read back, and the egress counters per
	// End; zero for the in-process link.
	netemAvailable bool
	offload        []Offload
	counters       [2]*nftCounters

	closeMu sync.Mutex
	closed  bool
}

// New builds the link for p. For the namespace backends (netem, the
// emulator, none) that is the namespaces, the veth pair (and, for the
// emulator, the shaper namespace and process between them), addresses,
// offload settings (Options.Offload), egress counters and the shaping; they need
// Linux, and elsewhere New returns an error wrapping
// errors.ErrUnsupported. For BackendInProcess it is the two in-process
// ends and the model between them, on any system. It logs the backend
// chosen and one line per direction describing the shaping as applied.
//
// On error nothing New created is left behind.
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
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler) // a library speaks only when asked
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

// Close stops the shaping and releases the ends. For the namespace
// backends it removes the filters and drops the namespaces, which
// destroys the veth pairs and nftables tables in them; sockets still open
// in a namespace keep that namespace (but not the link's shaping) alive
// until they close, and Close returns once the kernel's worker has
// finished tearing the namespaces down (waiting at most 0.5 s), so that a
// link built and measured next does not share the CPUs with that work.
// For the in-process link it closes every socket of both ends. Close is
// idempotent.
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

// Err reports whether the link is still intact: nil, or why not (the
// emulator's shaper process has exited, or netem stopped following its
// schedule). Check it after a run so a run over a broken link is never
// reported as a result.
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
// direction: for netem read back from the kernel's qdisc dump, for the
// emulator and the in-process link from their own configuration (seeds
// included).
func (l *Link) Applied() []string { return append([]string(nil), l.shaper.applied()...) }
