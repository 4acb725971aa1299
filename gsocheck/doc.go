// Package gsocheck decides, from measurements of a link's queue, whether a
// sender really kept UDP segmentation offload (GSO) off.
//
// Why it matters: a queue limit counted in packets, and a loss rate applied
// per packet, only mean what they say if every packet is wire-sized. A UDP
// sender that writes with UDP_SEGMENT hands the qdisc one super-packet per
// write, so the queue holds many times the bytes it appears to and a loss
// drops a whole write. A qdisc's packet counter cannot tell: it counts
// segments either way. Bytes per queue slot can.
//
// With the datagram pinned, one wire packet occupies Expected(datagram, l2)
// bytes of queue: payload + 8 (UDP) + 20 (IPv4) + the link-layer overhead
// (14 on veth), so 1442 for 1400-byte datagrams.
//
// FromQueue reads queue samples (packets and bytes queued at an instant, as
// a qdisc's backlog or the userspace emulator reports them). It uses only
// samples with at least two packets queued and reports:
//
//   - the pooled mean: total queued bytes over total queued packets across
//     those samples;
//   - the per-sample median and maximum of bytes per slot;
//   - a verdict. On when a sample held more than one datagram per slot plus
//     a whole extra datagram (only a super-packet can do that), or when more
//     than 2% of samples held more than one datagram per slot. Off when
//     neither, given at least 10 occupied samples; Inconclusive otherwise.
//
// The tolerance is one-sided on purpose. The pooled mean sits a little under
// Expected in a healthy run, because the sender's small packets (64-byte
// echoes, acknowledgement-only datagrams) share the queue and pull it down:
// the original Rust bench measured 1436.1-1441.9 against 1442. A low mean is small
// packets, not a short datagram, so the mean is reported but never decides.
// The maximum is the sharp statistic, with one correction: a queue's packet
// and byte counts are not read atomically (the kernel reads a qdisc's length
// and byte backlog at different moments without a lock), so a few samples in
// a thousand can show one packet's bytes too many on a multi-CPU machine. A
// torn read cannot add more than one packet, and it is rare; a segmenting
// sender shows super-packets in most samples. That bench's deliberately
// wrong control measured 9669 bytes per slot; its healthy runs a maximum of
// exactly 1442.
//
// FromCounters reads the other kind of evidence: packet, byte and oversize
// counters taken where a qdisc would sit (an nftables counter on a device's
// egress hook runs before the device segments), for links where the queue
// itself only ever sees wire-sized packets, such as a userspace emulator
// behind a veth that segments first.
//
// The package does not know how the samples or counters were taken.
package gsocheck
