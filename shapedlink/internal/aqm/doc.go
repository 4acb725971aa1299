// Package aqm is the queue discipline at the emulator's bottleneck: the
// frames that wait for the emulated link's rate form a queue, and this
// package decides which of them to send next and which to drop or mark.
// It offers drop-tail FIFO (tc's pfifo), CoDel (RFC 8289, tc's codel)
// and FQ-CoDel (RFC 8290, tc's fq_codel), each behaving as Linux's
// include/net/codel_impl.h, net/sched/sch_codel.c and
// net/sched/sch_fq_codel.c do, apart from the differences listed below.
//
// It is arithmetic only: no clock, no goroutines, no frames. Every call
// takes now, in nanoseconds on any monotonic scale, so tests drive it with
// a fake clock. A packet is a Packet (length, flow hash, ECN capability
// and the caller's handle Ref); the frame bytes stay with the caller.
// New allocates the packet pool for Limit packets; Enqueue and Dequeue
// never allocate, so the queue can sit on the forwarding path.
//
// # How the emulator uses it
//
// Per direction, one Queue replaces the drop-tail wait for the rate (the
// delay line after it is unchanged):
//
//	arrival ─► Classify(frame) ─► Enqueue(now, Packet{Len, Flow, ECT, Ref: slot})
//	                                 │ drops: onDrop(p, overlimit) frees p.Ref's slot
//	link free at now ─► Dequeue(now) ─► marked? SetCE(frame) ─► serialise ─► delay line
//	                                 │ drops: onDrop(p, CoDelDrop) frees the slot
//
// Dequeue is called when the link can start the next frame (the previous
// one's len*8/rate is over), because CoDel judges a packet by its sojourn
// time, now minus its Enqueue time, at the moment it leaves the queue for
// the link. The propagation delay comes after and is not part of the
// sojourn, as on a real bottleneck router. Limit counts the frames
// waiting here only, not those in the delay line (unlike netem's limit).
// Stats gives the counters for the emulator's shared statistics and
// FlowBacklogs the per-flow occupancy for its queue sampler. Non-IP
// frames (Classify's ok false) go in as flow 0, not ECN-capable.
//
// # CoDel
//
// A CoDel instance looks at the packet it is about to send. When its
// sojourn time is below Target, or no more than mtu (1514) bytes are
// left queued behind it, all is well and first_above_time is cleared.
// Otherwise, the first such packet sets first_above_time to now plus
// Interval, and once now reaches first_above_time it is OK to drop. On
// the first OK-to-drop packet CoDel enters the dropping state: it drops
// that packet (and sends the next one), and schedules the next drop for
// now plus Interval/sqrt(count). In the dropping state each packet whose
// sojourn is back under Target (or behind which at most an mtu is left)
// ends the state; otherwise, whenever now reaches the scheduled time, count
// goes up by one, the packet is dropped, and the next drop is scheduled
// Interval/sqrt(count) after the previous scheduled time (not after now),
// so the drop rate rises with the square root of the episode's drops. On
// entering the dropping state again, if the previous episode dropped more
// than one packet beyond its start (count - lastcount > 1) and its next
// drop was scheduled less than 16 intervals ago, count restarts from that
// difference instead of 1, resuming roughly the drop rate that controlled
// the queue last time. With Config.ECN an ECN-capable packet (Packet.ECT)
// is marked instead of dropped: Dequeue returns it with marked set (the
// caller sets CE with SetCE) and it counts as a drop for the control law;
// a packet that is not ECN-capable is dropped. A Dequeue that finds the
// queue empty leaves the dropping state.
//
// # FQ-CoDel
//
// Packets go to flow queue Flow % Flows, each a FIFO with its own CoDel
// state. A queue that gets a packet while on neither list joins the tail
// of the new list with a deficit of one Quantum (Stats.NewFlows counts
// this). Dequeue serves the head of the new list, or if that is empty the
// old list, by deficit round robin: a queue whose deficit is spent (zero
// or less) gets another Quantum and moves to the tail of the old list;
// otherwise its CoDel dequeues a packet and the deficit drops by the
// packet's length. A queue found empty (by CoDel, which then also leaves
// its dropping state) moves from the new list to the tail of the old
// list if the old list is not empty, so that a flow that empties and
// comes straight back is not new again and cannot starve the old flows
// (RFC 8290 section 4.2); an empty queue on the old list, or on the new
// list when the old list is empty, leaves the lists. Over Limit packets
// or MemoryLimit bytes, the arrival is queued first, then the flow queue
// with the most bytes (the first one, on a tie) loses packets from its
// head until half its bytes or DropBatch packets are gone (possibly
// including the arrival), and its CoDel count rises by that many. The
// mtu rule of each flow's CoDel compares the bytes of the whole queue,
// all flows, with the mtu, as the kernel does.
//
// # Differences from Linux
//
//   - Time is int64 nanoseconds. Linux's CoDel keeps time as a u32 count
//     of 1024 ns units that wraps every 73 minutes, and starts dropping
//     strictly after first_above_time; here it is OK to drop from
//     first_above_time itself, as in RFC 8289.
//   - The control law is computed exactly, Interval/sqrt(count) in
//     floating point, truncated to the nanosecond. Linux keeps
//     1/sqrt(count) as a 16-bit fixed-point value refined by one Newton
//     step per change of count, which is off for small counts: at count 2
//     the next drop comes Interval/2 later (50 ms by default) rather than
//     Interval/sqrt(2) (70.7 ms), and it is within about 2% from count 4
//     on.
//   - The count reuse rule applies only when the CoDel instance has had a
//     dropping episode. Linux compares with drop_next's initial value, 0
//     on its wrapping clock, so for an instance that never dropped but
//     whose count was raised by fq_codel's fat-flow drops the outcome
//     depends on the uptime.
//   - mtu is fixed at 1514 bytes, what Linux's psched_mtu gives an
//     Ethernet device with the usual 1500-byte mtu; Linux takes it from
//     the device.
//   - The flow queue is Packet.Flow % Flows with the caller's hash.
//     Linux takes reciprocal_scale(skb_get_hash(skb), flows), the high
//     bits of a randomly keyed jhash of the flow keys, or a tc filter's
//     verdict; Classify's hash is this package's own (see there), so
//     which flows share a queue differs from the kernel's, as it differs
//     between boots.
//   - FQ-CoDel's memory accounting uses Packet.Len. Linux charges each
//     packet's buffer truesize, several hundred bytes more than the length
//     for small packets, so MemoryLimit binds later here.
//   - ECN is off unless Config.ECN is set, for every Kind; tc's fq_codel
//     has it on by default (tc's codel does not).
//   - Not implemented: ce_threshold, tc filters and classes, fq_codel's
//     per-flow drop counters, and the backlog reports to parent qdiscs.
//   - Lengths are clamped to [0, maxLen] at Enqueue.
//
// Where RFC 8289's pseudocode and Linux differ this package follows
// Linux: a Dequeue of an empty queue leaves the dropping state but keeps
// first_above_time (the pseudocode clears it; for FQ-CoDel this matters
// to a flow that empties while other flows keep more than an mtu queued);
// and an empty new flow queue leaves the lists outright when the old list
// is empty (RFC 8290 moves it to the old list regardless).
//
// # Classify
//
// Classify counts ECT(0), ECT(1) and CE all as ECN-capable. The IPv4
// header length comes from IHL. IPv4 fragments (first or not) hash
// without ports, so all fragments of a datagram share a flow. IPv6
// hop-by-hop, routing and destination options headers are skipped (up to
// four); behind a fragment header, or any other header, the packet hashes
// as addresses and that next header without ports. The IPv6 flow label
// is not used. A frame cut short inside the transport header hashes
// without ports. The hash is this package's own (FNV-1a over the seed and
// the fields, then a murmur3-style finaliser); Linux's fq_codel uses
// skb_get_hash, a jhash of the dissected flow keys with a random
// boot-time key, made symmetric in source and destination and, for IPv6
// with a flow label, taken over the label instead of the ports. Queues
// differ only in which flows share a queue.
package aqm
