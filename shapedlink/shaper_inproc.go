package shapedlink

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/inproc"
)

// PacketEvent is one step of one datagram through an in-process link
// (Options.PacketTrace): when it is written and, if accepted, when it
// leaves. Its String is a trace line, "40.1136ms down #1 142B delivered".
type PacketEvent struct {
	At   time.Duration // since the link was built, on its clock (a synctest bubble's inside one)
	Dir  Dir
	Seq  uint64 // the datagram's number in its direction, from 1, in the order written
	Dup  bool   // the event is of the link's copy of datagram Seq
	Size int    // bytes on the wire: 14 + 20 + 8 of headers, and the payload
	What PacketFate
	Due  time.Duration // when an accepted datagram arrives (zero while in a queue discipline)
	// Corrupted says the link flipped bit Bit of the frame, from the
	// Ethernet header's first.
	Corrupted bool
	Bit       uint32
	Marked    bool // CE, which a net.PacketConn's reader cannot see
}

// String is the event as one line of a trace.
func (e PacketEvent) String() string {
	return inproc.Event{At: e.At, Dir: e.Dir, Seq: e.Seq, Dup: e.Dup, Size: e.Size, What: inproc.What(e.What),
		Due: e.Due, Corrupted: e.Corrupted, Bit: e.Bit, Marked: e.Marked}.String()
}

// packetEvent is the in-process link's event as a PacketEvent.
func packetEvent(e inproc.Event) PacketEvent {
	return PacketEvent{At: e.At, Dir: e.Dir, Seq: e.Seq, Dup: e.Dup, Size: e.Size, What: PacketFate(e.What),
		Due: e.Due, Corrupted: e.Corrupted, Bit: e.Bit, Marked: e.Marked}
}

// PacketFate is what happened to a datagram at a PacketEvent.
type PacketFate uint8

// String is the fate's name, as a trace line gives it.
func (f PacketFate) String() string { return inproc.What(f).String() }

// The fates: when written (accepted, lost, over the limit, blackout), and
// when leaving (queue drops, delivered, dropped at the receiver).
const (
	PacketAccepted     = PacketFate(inproc.Accepted)
	PacketLost         = PacketFate(inproc.Lost)
	PacketOverLimit    = PacketFate(inproc.OverLimit)
	PacketBlackout     = PacketFate(inproc.Blackout)
	PacketQueueDrop    = PacketFate(inproc.QueueDrop)
	PacketCoDelDrop    = PacketFate(inproc.CoDelDrop)
	PacketDelivered    = PacketFate(inproc.Delivered)
	PacketChecksumDrop = PacketFate(inproc.ChecksumDrop)
	PacketSocketDrop   = PacketFate(inproc.SocketDrop)
	PacketNoSocket     = PacketFate(inproc.NoSocket)
)

// simEnd is an end of the in-process link, behind a Namespace.
type simEnd struct {
	link  *inproc.Link
	index int
	role  string
}

// listenPacket binds an in-process UDP socket at the end.
func (e *simEnd) listenPacket(network, address string) (net.PacketConn, error) {
	c, err := e.link.ListenPacket(e.index, network, address)
	if err != nil {
		return nil, fmt.Errorf("shapedlink: the in-process link's %s end: %w", e.role, err)
	}
	return c, nil
}

// refuse is the error for what an in-process end cannot do.
func (e *simEnd) refuse(what, why string) error { return inProcessRefusal(what, e.role+" end", why) }

// inProcessRefusal says the in-process link cannot do what, at where,
// because why.
func inProcessRefusal(what, where, why string) error {
	return fmt.Errorf("shapedlink: %s at the %s: the in-process link carries datagrams only, and %s; "+
		"make UDP sockets with ListenPacket, or build the link with the %q or %q backend: %w",
		what, where, why, BackendEmulator, BackendNetem, errors.ErrUnsupported)
}

// noEgressHook is the error of an instrument or control that acts on
// end e's egress hook (nftables), which only a namespace backend has.
func noEgressHook(what string, e End) error {
	return inProcessRefusal(what, e.String()+" end", "it has no veth or nftables egress hook")
}

// inprocShaper is BackendInProcess's shaper.
type inprocShaper struct {
	link  *inproc.Link
	dirs  [2]Direction // as configured, seeds drawn
	lines []string
}

// newInProcess builds the in-process link for p (New has checked p and
// the backend).
func newInProcess(p Profile, opts Options, log *slog.Logger) (*Link, error) {
	if opts.Mode != ModeAuto && opts.Mode != ModeInProcess {
		return nil, fmt.Errorf("shapedlink: the %q backend needs no privilege, so mode %q means nothing to it; leave Options.Mode empty",
			BackendInProcess, opts.Mode)
	}
	dirs, err := p.load()
	if err != nil {
		return nil, err
	}
	dirs[Down].Seed, dirs[Up].Seed = opts.Seed, backSeed(opts.Seed)
	for _, d := range []Dir{Down, Up} {
		for dirs[d].Seed == 0 {
			var b [8]byte
			if _, err := rand.Read(b[:]); err != nil {
				return nil, fmt.Errorf("shapedlink: drawing a seed for the in-process link: %w", err)
			}
			dirs[d].Seed = binary.LittleEndian.Uint64(b[:])
		}
	}
	cfg := inproc.Config{Dirs: dirs, Addrs: [2]netip.Addr{serverAddr, clientAddr}}
	if trace := opts.PacketTrace; trace != nil {
		cfg.Trace = func(e inproc.Event) { trace(packetEvent(e)) }
	}
	il, err := inproc.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("shapedlink: building the in-process link: %w", err)
	}
	s := &inprocShaper{link: il, dirs: dirs, lines: []string{
		"server -> client: inproc " + dirs[Down].Describe(),
		"client -> server: inproc " + dirs[Up].Describe(),
	}}
	l := &Link{profile: p, dirs: dirs, backend: BackendInProcess, mode: ModeInProcess, log: log, shaper: s,
		server: &Namespace{role: "server", sim: &simEnd{link: il, index: 0, role: "server"}},
		client: &Namespace{role: "client", sim: &simEnd{link: il, index: 1, role: "client"}}}
	log.Info("shapedlink: backend chosen", "backend", l.backend, "reason", "requested by the caller", "mode", l.mode)
	return l, nil
}

func (s *inprocShaper) applied() []string { return s.lines }

func (s *inprocShaper) stats() (ShaperReport, bool) {
	var r ShaperReport
	for i, name := range []string{"server->client", "client->server"} {
		r.Directions = append(r.Directions, newShaperStats(name, s.link.Counters(Dir(i))))
	}
	return r, true
}

// sampler reads the direction's counters (no flow queues: those are the
// emulator's).
func (s *inprocShaper) sampler(e End) (*Sampler, error) {
	d := e.dir()
	return &Sampler{poll: func(q *QueueSample) error {
		c := s.link.Counters(d)
		q.At = time.Now()
		q.Packets, q.Bytes = int(c.Packets), int(c.Bytes)
		q.Drops, q.LossDrops, q.LimitDrops = c.Drops(), c.LossDrops, c.LimitDrops
		return nil
	}}, nil
}

// scheduleStart is when the link was built, if a direction has a
// schedule or a trace: both count from then.
func (s *inprocShaper) scheduleStart() time.Time {
	for _, d := range s.dirs {
		if d.Schedule != "" || d.Trace != "" {
			return s.link.Base()
		}
	}
	return time.Time{}
}

// appliedChanges: the in-process link applies each change at its time
// exactly, to the datagrams' write times.
func (s *inprocShaper) appliedChanges() ([]AppliedChange, error) {
	start := s.scheduleStart()
	if start.IsZero() {
		return nil, nil
	}
	return scheduledChanges(s.dirs, start, start, time.Now()), nil
}

func (s *inprocShaper) record(hs *HostState) {
	hs.EmulatorSeeds = []uint64{s.dirs[Down].Seed, s.dirs[Up].Seed}
}
func (s *inprocShaper) pid() int     { return 0 }
func (s *inprocShaper) err() error   { return nil }
func (s *inprocShaper) close() error { return s.link.Close() }
