package shapedlink

import (
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
