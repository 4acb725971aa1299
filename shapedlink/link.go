package shapedlink

import (
	"fmt"
	"log/slog"
	"net/netip"
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
	// emulator always honours it; kernel netem takes it as
	// TCA_NETEM_PRNG_SEED on Linux 6.6 and later and ignores it before.
	// Applied and HostState say which seeds were in force, or that
	// netem's draws cannot be repeated on this kernel.
	Seed uint64
	// Logger receives one line per decision (backend chosen, shaping as
	// applied), at Info. Nil discards them; Applied and Backend say the
	// same after New returns.
	Logger *slog.Logger
	// Offload is how the ends handle segmentation offload: OffloadWire
	// (the zero value) pins every device to wire-sized packets, so every
	// queue and counter sees one wire packet per frame, which is what the
	// bench's offload evidence reads; OffloadKeep leaves the devices'
	// offloads as the kernel has them (TSO, GSO, checksum offload), so
	// senders hand over super-packets, as on a real host, and a link can
	// carry gigabits. The emulator still judges every wire segment of a
	// super-packet on its own (see the package doc); netem, as the
	// kernel's, judges a super-packet as one packet, and says so in its
	// applied line. shapedlinktest.New and examples/overlink default to
	// OffloadKeep.
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

// Fixed addresses (the device names are in link_linux.go). Each link lives
// in namespaces of its own, so the same names and addresses never collide
// between links.
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
