// Package emulator is shapedlink's userspace link emulator: a process that
// forwards Ethernet frames between two interfaces with netem's semantics,
// for kernels that have no sch_netem (minimal cloud, VM and CI kernels).
//
// It is internal to shapedlink. Code that wants a shaped link uses
// shapedlink.New, which picks netem or this emulator and records which.
//
// # Where it sits
//
//	server ns            shaper ns                           client ns
//	 [veth] ======= [IfA]  ->  AToB  ->  [IfB] ======= [veth]
//	                [IfA]  <-  BToA  <-  [IfB]
//
// The shaper reads every frame that arrives on IfA with an AF_PACKET
// (SOCK_RAW, ETH_P_ALL) socket, applies the AToB direction, and writes the
// frame unchanged to IfB; BToA is the mirror. Frames are forwarded as a
// bridge would: MAC addresses, ARP and everything else pass untouched, so
// the two outer namespaces see one Ethernet segment. AF_PACKET works inside
// an unprivileged user namespace; TUN is not used.
//
// # Super-packets
//
// Both sockets carry a virtio-net header (PACKET_VNET_HDR) with each frame,
// so a segmentation-offload super-packet (TCP over IPv4 or IPv6, or UDP
// with UDP_SEGMENT; up to 64 KiB) crosses the shaper as one frame with its
// checksum still partial, as it would cross a virtual NIC. With wire-sized
// devices (shapedlink's default) none arrives. With Config.KeepOffload the
// ends keep their offloads and super-packets are the rule; the forwarding
// loop then works per wire segment all the same: package segment cuts a
// super-packet into the segments the kernel's own segmentation would make,
// the model judges each at its wire length in order (loss, duplication,
// reordering, jitter, corruption, the limit, the rate and the queue
// disciplines, with the same draws a wire-sized run of the same arrivals
// makes), and segments are held in the delay line as references into the
// one buffer. When segments are sent, each run of consecutive segments of
// one super-packet that are due by the same wake-up, unedited, leaves as one
// smaller super-packet (its headers rewritten as tcp_gso_segment or
// __udp_gso_segment would write them for that run); a lost, late or edited
// segment splits the run. A corrupted segment is first given a complete
// checksum, so the receiver catches the flipped bit. Counters count wire
// segments (Received, Forwarded, the drops), and SuperPacketsIn/Out count
// the super-packets read and written. A super-packet package segment
// refuses (a tunnel's, one with a VLAN tag in the frame or an IPv6
// extension header) is judged and sent whole, as one segment, and counted
// in JudgedWhole; shapedlink turns the ends' tunnel segmentation offloads
// off so that tunnels do not produce them.
//
// # The model, per direction
//
// The model is package linkmodel's (clock-free, shared with every other
// userspace carrier of a direction), run on the configuration's
// linkspec.Direction; this section says what it matches in netem.
//
//	arrival ──► loss? ──yes──► dropped (LossDrops)
//	              │no
//	              ▼
//	        held >= Limit? ──yes──► dropped (LimitDrops)
//	              │no          (held counts the rate queue AND the delay line)
//	              ▼
//	   ┌──────── rate queue ────────┐   ┌────── delay line ──────┐
//	   │ serialise: len*8/rate each │──►│ constant one-way Delay │──► forwarded
//	   └────────────────────────────┘   └────────────────────────┘
//
//	due = max(arrival + Delay, due of previous frame still held) + len*8/rate
//
// This is what Linux's sch_netem (net/sched/sch_netem.c, netem_enqueue and
// packet_time_ns) does with "delay D rate R limit L loss P", and the
// emulator matches it in these points:
//
//   - Order: the loss is decided first, so a lost frame never counts
//     against the limit; then the limit is checked against every frame
//     still held (netem's tfifo holds a frame until its time_to_send, so
//     its limit counts frames in the delay line too); then the due time.
//   - Rate and delay: netem computes time_to_send as
//     max(now+delay, time_to_send of the last queued frame) + packet time.
//     A link that serialises first and then propagates for a constant D
//     delivers at max(now, previous departure) + packet time + D, which is
//     the same number, so "serialise, then delay" and netem's formula agree
//     exactly when there is no jitter. With jitter the model computes
//     netem's formula itself, with the delay drawn uniformly from
//     [D-J, D+J) per accepted frame (netem's tabledist without a table),
//     so with a rate no frame leaves before the one ahead of it.
//   - Packet time: len*8/rate truncated to the nanosecond, with len the
//     whole frame including the 14-byte Ethernet header and no FCS,
//     preamble or gap (netem's qdisc_pkt_len on a veth, without netem's
//     optional overhead/cell terms).
//   - Loss: independent Bernoulli per frame, or netem's Gilbert-Elliott
//     chain (GE), drawn from a seeded PCG (math/rand/v2) per direction, so
//     a run is reproducible given the seeds and the arrival order; no
//     random draw is made when loss is 0, as netem makes none. Every
//     other process (duplication, reordering, jitter) draws from the same
//     generator in netem_enqueue's order: duplication, loss, the limit,
//     reordering, the delay. One seed per direction, recorded, thus fixes
//     all of them.
//   - Duplication (DupPct): drawn before the loss, and a frame both
//     duplicated and lost goes through once (netem counts copies: one,
//     plus one, minus one). A duplicate is judged first, as netem enqueues
//     its clone at the root before the original: its own loss draw, the
//     limit (it counts against it, and may push the original over), its
//     own delay. The forwarding loop copies the frame into a second
//     buffer.
//   - Reordering (ReorderPct, ReorderGap): after at least gap-1 frames
//     delayed normally, a frame is sent at once with the probability,
//     ahead of everything held, taking no time on the rate and not
//     moving the rate queue's tail, as netem puts it at the head of its
//     queue. Held frames are kept sorted by due time, ties in arrival
//     order, as netem's tfifo keeps them.
//   - Correlation: netem's get_crandom, each u32 draw mixed with the last
//     by the correlation. As in netem, a correlated Bernoulli loss loses
//     fewer frames than its percentage (the mixed values bunch in the
//     middle), and a delay correlation has next to no effect: netem takes
//     the correlated value modulo 2*jitter or the table's size, which
//     keeps its low bits only (measured on the model: a 75% correlation
//     leaves a lag-1 autocorrelation of 0.008 for 5 ms of uniform jitter
//     and -0.001 with the normal table). The emulator reproduces this
//     rather than correcting it, so the two backends agree.
//   - Jitter tables (JitterDist): netem's tabledist with the tables of
//     package disttable, the same tables shapedlink sends to netem.
//
// # A queue discipline
//
// With a queue discipline (Direction.Queue) the model has two stages instead of one formula:
//
//	arrival ──► loss? ──► held >= Limit? ──► discipline (package aqm:
//	  fifo, codel, fq_codel) ──► serialise at the rate ──► Delay ──► forwarded
//
// The discipline holds the frames waiting for the rate and decides, each
// time the link finishes a frame, which frame goes next (Model.Dequeue at
// Model.NextDequeue), dropping or marking by its own rules as it does; a
// frame's due time is its serialisation's end plus the delay. The
// forwarding loop replays the link's choices in time order with the
// arrivals (every choice up to an arrival's timestamp is made before the
// arrival is queued, and choices up to the last drain of the socket
// before sleeping), so a choice never misses a frame that had arrived.
// Flows are the 5-tuple hashed with a per-direction seed (aqm.Classify);
// a frame the discipline marks has its IP ECN field set to CE (and the
// IPv4 checksum updated) before it is written. Limit then bounds
// everything held, the delay line included; shapedlink sizes it as the
// discipline's limit plus what the delay line holds at the rate. netem
// has no such stage: its rate is applied inside its own time queue.
//   - Rate 0 means no rate limit, as in netem.
//
// Where it differs from netem:
//
//   - netem sits on the sender's own egress, so a limit drop is returned
//     to a local sender (NET_XMIT_DROP, which TCP treats as local
//     congestion) and the qdisc's backlog pushes back on the socket; here
//     the shaper is one hop away, so a limit drop is silent to the sender,
//     exactly like a loss drop.
//   - Two extra veth hops (sender to shaper, shaper to receiver) add tens of
//     microseconds per direction, and the shaper adds its read and timer
//     latency; linkspec.Counters.LateNanos measures the timer part.
//   - netem's PRNG and seed handling are the kernel's; the loss pattern for
//     a given seed is this package's own and is not the kernel's.
//   - On a busy link the socket is read in batches (see Timing), so the
//     held gauges (linkspec.Counters.Packets and Bytes, what the queue sampler
//     reads) leave out frames that arrived in the last 500 us and are not
//     yet read; the model itself judges each frame as of its arrival.
//   - Frames the kernel drops because the shaper's receive buffer is full
//     (linkspec.Counters.SocketDrops) and egress write failures (SendErrors) are
//     extra drops netem does not have; both are counted and should be zero.
//
// # Using it (for shapedlink)
//
// In package shapedlink:
//
//	func init() { emulator.MaybeServe() } // becomes the shaper if re-executed as one
//
//	cmd, mon, err := emulator.Command(cfg)
//	// start cmd from the permanent starter thread, inside the shaper
//	// network namespace: the child is born there and never calls setns.
//	err = proc.StartInNetns(cmd, shaperNetnsFD)
//	err = mon.Ready(ctx)   // sockets open, forwarding
//	...
//	st := mon.Snapshot()   // [0] is AToB, [1] is BToA
//	err = mon.Stop()       // SIGTERM, wait; the monitor owns cmd.Wait
//
// Command re-executes /proc/self/exe with the environment variable named
// by EnvConfig set, the configuration as JSON in a memfd as file
// descriptor 4 (a trace can be longer than an environment variable may
// be), a memfd-backed shared-memory page as file descriptor 3 (counters written with atomic stores by the
// shaper and read atomically by Monitor, no system calls), and a pipe as
// standard input. The shaper exits with status 0 on SIGTERM or SIGINT, on
// end of file on standard input (the parent process died or called Stop),
// and is killed by SIGKILL through PR_SET_PDEATHSIG when the thread that
// started it exits. That last point matters to the starter: start the
// command from a thread that never exits, which in Go means a thread a
// goroutine keeps locked for the life of the process. Any other thread,
// even one that was switched back to its namespace and unlocked, may later
// be picked up by a goroutine that locks it and ends without unlocking it
// (as namespace-switching code does), and the runtime then ends the thread
// and the kernel kills the shaper. Package internal/proc keeps such a
// thread: start the command with proc.StartInNetns (shapedlink's
// Namespace.Start does).
// Do not call cmd.Wait yourself: Monitor.Ready and Monitor.Stop wait for
// the process. Monitor does not set Stdout; Stderr is captured (its tail
// appears in errors) unless the caller sets cmd.Stderr before Start.
//
// Ready returns only once both interfaces are up with carrier (before the
// kernel activates a device's qdisc, frames sent on it vanish) and both
// sockets are bound; if the shaper fails first, Ready returns its own
// error message (for example a missing interface, or no CAP_NET_RAW).
// Monitor.Describe gives one tc-like line per direction, with the seeds;
// Monitor.Priority says how the shaper is scheduled (see Timing).
//
// # Unprivileged
//
// The shaper needs only CAP_NET_RAW in its network namespace, which root
// of a user namespace has, so it runs inside shapedlink's unprivileged
// mode. Two things are then weaker, and both are visible: SCHED_FIFO is
// refused (Monitor.Priority says "asked for SCHED_FIFO 1: operation not
// permitted"), and the receive buffers are capped at net.core.rmem_max
// instead of 8 MiB, so a shaper starved of CPU for long can lose frames in
// the kernel (linkspec.Counters.SocketDrops). The sizes the kernel granted are read
// back and reported (linkspec.Counters.RcvBufBytes and SndBufBytes).
//
// # Timing
//
// Each direction runs on its own locked OS thread that both reads and
// writes, so there is no hand-off between threads: it writes every frame
// that is due (sendmmsg), reads whatever has arrived (non-blocking
// recvmmsg, batches of up to 64), and when there is nothing to do it
// sleeps in ppoll (timer slack set to 1 ns) on the ingress socket until
// SpinThreshold before the next due time, then spins on the clock while
// still reading the socket. It spins only towards a frame that met no
// queue (it did not wait for the rate behind another frame) and is not
// followed within 50 us by the next one: sparse traffic, where a timer's
// wake-up latency would show as round-trip error, however many such
// frames a long delay holds at once. It spins for at most a quarter of
// every 10 ms, so a busy link falls back to timer wake-ups (tens of
// microseconds late, which is immaterial next to its queue) instead of
// pinning a core. With Config.DepartureWindow, once the head segment is
// due every segment due within the window leaves with it, up to the
// window early (counted in linkspec.Counters.Early): whole runs of a
// super-packet then leave in one write on a multi-gigabit link, while a
// frame alone on the link still leaves at its due time. A frame's arrival time is the
// kernel's receive timestamp (SO_TIMESTAMPNS), so the time the thread
// takes to wake up and read does not add to the emulated delay. Frame
// buffers are preallocated (Limit plus a batch, 64 KiB each in anonymous
// memory touched only as far as frames reach); the forwarding path does
// not allocate. All system calls on the forwarding path, the sleep
// included, are raw: the goroutine keeps its P, so the runtime does not
// hand it around on every wake-up (a profile showed that churn costing
// more than the forwarding).
//
// While frames are held, a frame arriving now cannot be due before now
// plus the delay, so the thread does not watch the socket: it reads in
// batches at the next due time or within 500 us of its last read, and
// replays the arrivals in timestamp order, writing any frame due before
// an arrival first, so the limit judges each arrival as it would have at
// that instant. A busy link thus costs one wake-up per batch rather than
// one per frame, and wakes at most every 50 us (frames may leave up to
// that late, which linkspec.Counters.Late shows).
//
// Scheduling matters more than any of that on a busy machine. By default
// every thread of the shaper asks for SCHED_FIFO priority 1: measured on
// a 2-core VM at load 5-7, forwarding threads at nice 0 (and at nice -10)
// were intermittently 10-100 ms late, because a preempted locked
// goroutine needs one of the runtime's other threads to hand it back a P
// and those threads waited for a CPU; with SCHED_FIFO on all threads the
// 99th percentile lateness was under 0.5 ms on the same machine.
// Monitor.Priority says what was applied (an unprivileged shaper keeps its
// inherited policy and says so); linkspec.Counters.Late is a histogram of how late
// each frame was written relative to its due time.
//
// # Calibration
//
// docs/calibration.md has the measurements (go run ./examples/calibrate)
// and what they mean. In short, on the 2-vCPU VM this was built on, with
// the machine otherwise idle: the idle round trip, timed by the kernel
// with the kernel answering, was 0.015-0.054 ms longer than configured at
// p50 on every profile from 2 ms to 300 ms and 1 Mbit/s to 1 Gbit/s, of
// which an unshaped veth pair with the same settings shows 0.004-0.022 ms;
// its p99 was 0.20-0.45 ms long in most runs and up to 1.1 ms in a few,
// mostly the cost of crossing a cold network path three times instead of
// once (the bare pair's own p99 was 0.12-0.55 ms depending on the probe
// spacing). linkspec.Counters.Late put the emulator's own lateness at p50 1 us and
// p99 0.02-0.35 ms. Rates are held to 100.0% of the wire rate up to
// 100 Mbit/s for any sender, and to 97.8% and 96.5% at 1 and 2 Gbit/s
// for a Cubic flow with large buffers; an unlimited link carries what the
// bare pair carries.
package emulator
