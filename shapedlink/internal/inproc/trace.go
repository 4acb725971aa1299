package inproc

import (
	"fmt"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkmodel"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// What is what happened to a datagram at an Event.
type What uint8

const (
	// Accepted: the model took the datagram when it was written; Due is
	// when it reaches the far end (zero while it waits in a queue
	// discipline, whose choice sets it later).
	Accepted What = iota
	// Lost, OverLimit and Blackout: the model dropped it when it was
	// written (the random loss, the packet limit, the schedule's
	// blackout).
	Lost
	OverLimit
	Blackout
	// QueueDrop and CoDelDrop: the queue discipline dropped it, by its
	// limit or by CoDel.
	QueueDrop
	CoDelDrop
	// Delivered: it reached the receiving socket's queue.
	Delivered
	// ChecksumDrop: the link corrupted it and the receiver's checksum
	// would drop it (Event.Bit says where the flipped bit was).
	ChecksumDrop
	// SocketDrop: the receiving socket's queue was full.
	SocketDrop
	// NoSocket: no socket is bound to its destination address and port.
	NoSocket
)

var whatNames = [...]string{"accepted", "lost", "over-limit", "blackout", "queue-drop", "codel-drop",
	"delivered", "checksum-drop", "socket-drop", "no-socket"}

func (w What) String() string {
	if int(w) < len(whatNames) {
		return whatNames[w]
	}
	return fmt.Sprintf("What(%d)", int(w))
}

// verdictWhat is the Event for the model's verdict.
func verdictWhat(v linkmodel.Verdict) What {
	switch v {
	case linkmodel.Lost:
		return Lost
	case linkmodel.OverLimit:
		return OverLimit
	case linkmodel.Blackout:
		return Blackout
	}
	return Accepted
}

// Event is one step of one datagram through the link: when (since the
// link was built, on its clock), which direction, the datagram's number
// in that direction (from 1, in the order its datagrams were written;
// Dup marks the link's copy of it), its size on the wire (14 + 20 + 8
// bytes of headers and the payload) and what happened. A datagram has one
// event when it is written (accepted, or dropped and why) and, if it
// was accepted, one when it leaves the link (delivered, or dropped by a
// queue discipline or at the receiving end). Corrupted and Bit say the
// link flipped bit Bit of the frame (counted from the Ethernet header's
// first byte); Marked that a queue discipline marked it CE, which the
// receiver of a net.PacketConn cannot see.
type Event struct {
	At        time.Duration
	Dir       linkspec.Dir
	Seq       uint64
	Dup       bool
	Size      int
	What      What
	Due       time.Duration
	Corrupted bool
	Bit       uint32
	Marked    bool
}

// String is the event as one line of a trace, for instance
// "40.1136ms down #1 142B delivered".
func (e Event) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v %s #%d", e.At, e.Dir, e.Seq)
	if e.Dup {
		b.WriteString(" dup")
	}
	fmt.Fprintf(&b, " %dB %s", e.Size, e.What)
	if e.What == Accepted && e.Due > 0 {
		fmt.Fprintf(&b, " due %v", e.Due)
	}
	if e.Corrupted {
		fmt.Fprintf(&b, " bit %d flipped", e.Bit)
	}
	if e.Marked {
		b.WriteString(" CE")
	}
	return b.String()
}

// event reports what happened to frame f (size bytes on the wire) at
// time at, if anyone is listening.
func (d *direction) event(f frame, size int, what What, at, due int64) {
	if d.link.trace == nil {
		return
	}
	d.link.trace(Event{At: time.Duration(at), Dir: d.dir, Seq: f.seq, Dup: f.dup, Size: size, What: what,
		Due: time.Duration(due), Corrupted: f.edit.Corrupt, Bit: f.edit.Bit, Marked: f.edit.Mark})
}
