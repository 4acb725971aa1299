// Package inproc carries a shaped link inside the process: two ends, each
// with an IPv4 address, whose UDP sockets are net.PacketConns, joined by
// two directions that run the same model as the emulator (package
// linkmodel, driven through its Carrier). No socket, namespace, privilege
// or system call is involved, so it runs on every operating system, and
// it reads the time only from the time package, so inside a
// testing/synctest bubble it runs in the bubble's virtual time: a minute
// of traffic takes as long as the endpoints' code takes to run, and the
// same seeds and the same writes give the same datagrams at the same
// times, every run. Outside a bubble it runs in real time, a
// cross-platform, unprivileged link for datagram protocols.
//
// Package shapedlink builds it as its in-process backend; this package is
// the carrier only.
//
// # How a datagram crosses
//
// WriteTo judges the datagram at the moment of the write (time.Now), on
// the wire as the emulator would see it: 14 + 20 + 8 bytes of Ethernet,
// IPv4 and UDP headers and the payload, which is what the rate and the
// limit count. First what was due by then happens, in the order the
// emulator keeps (linkmodel.Carrier): the schedule's changes, the queue
// discipline's choices, the frames due leaving; then the model's verdict.
// A frame accepted waits in the carrier's line, in due order with ties in
// arrival order as netem's tfifo. Each direction has a goroutine asleep on
// a time.Timer until its next event (the head frame's due time, the
// discipline's next dequeue, the schedule's next change); a write that
// brings the next event forward wakes it. When a frame is due it goes to
// the socket bound to its destination port at the far end, whose receive
// queue is bounded like a socket buffer (defaultReadBuffer, or what
// SetReadBuffer sets, in payload bytes): a datagram that does not fit is
// dropped and counted as a socket drop.
//
// # What the receiver does
//
// The link is its own receiver, so it does the receiver's part: a
// corrupted frame is dropped where the receiving host would drop it (its
// device for another destination address, its stack for another
// EtherType, IP's or UDP's checksum for the rest), and passes unchanged
// where it would pass: a flip in the Ethernet source address, the
// destination address's group bit, or a UDP checksum turned into zero.
// Those are counted (Corrupted, ChecksumDrops). A datagram for a port no
// socket is bound to is dropped (NoSocketDrops). Datagrams are sent
// Not-ECT, since a net.PacketConn cannot set the ECN field: a queue
// discipline with ecn=on drops them where it would mark an ECN-capable
// packet, as the kernel's does for a socket that sets no ECT.
//
// # Trace
//
// Config.Trace is told of each datagram's steps (Event): when it was
// written and what the model decided, and when it left the link and
// where it went. Within a direction the events come in the order they
// happened; the two directions report concurrently.
//
// # Not here
//
// Streams (TCP) and IPv6; fragmentation (a datagram over maxPayload is
// refused, as a socket with the DF bit refuses it); more addresses than
// one per end; and loopback to an end's own address.
package inproc
