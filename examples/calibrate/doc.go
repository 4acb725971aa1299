// Command calibrate measures how faithfully a shapedlink link reproduces
// its profile: configured against measured, per profile, with the figures
// the emulator's users need to trust it as they trust netem.
//
//	go run ./examples/calibrate                      # table on stdout
//	go run ./examples/calibrate -json > calib.json   # the same figures as JSON
//	go run ./examples/calibrate -profiles "80:10 80:10:1" -bulk 10s
//	go run ./examples/calibrate -backend netem       # calibrate kernel netem instead
//	go run ./examples/calibrate -render calib.json   # the table for a saved report
//	go run ./examples/calibrate -offload keep        # links that keep segmentation offload
//
// -offload chooses how every link of the run (and every bare pair beside
// one) treats segmentation offload: "wire" (the default) pins each device
// to wire-sized packets, the link the bench measures on, so every figure
// below describes that link; "keep" leaves the ends their TSO, GSO and
// checksum offload (and GRO as the kernel sets it, off on a veth), so senders hand the link super-packets, which the
// emulator cuts and judges per wire segment (shapedlink.OffloadKeep). The
// mode is in the report ("offload") and on the table's first line; a
// report saved before calibrate recorded it is a wire-sized one.
//
// For each profile (default 80:10, 150:2, 20:100 and 5:1000, each at 0% and
// 1% loss; -profiles takes the shapedlink grammar) it builds a fresh link
// and measures, in this order:
//
//   - The machine's own round trip (-bare, on by default): the probe
//     below over an unshaped veth pair with the same addresses and
//     offloads (shapedlink.BackendNone), built just before the link.
//   - Idle round trip, the link's: -echoes (default 200) ICMP echo
//     requests from the client namespace, one every -interval (default
//     10 ms), answered by the server namespace's kernel, each timed from
//     just before it is handed to the kernel to the kernel's receive
//     timestamp of its reply (SO_TIMESTAMPNS). No process is woken on the
//     way, so the figure is the path and the shaping, not the measuring
//     tools. The expected round trip is the profile's RTT plus the
//     serialisation of the 98-byte frame each way (netem adds that too);
//     the table shows p50 and p99 minus that against the targets, the
//     bare pair's figures, the excess over the bare pair, and the
//     emulator's own record of how late it wrote the probe's frames.
//   - Idle round trip, an application's: the same number of 64-byte UDP
//     echoes between two sockets of this process (so including both
//     ends' wake-ups), with the same echo over loopback beside it.
//   - One bulk TCP flow from server to client for -bulk (default 9 s, the
//     first third discarded), with BBR and 32 MiB socket buffers, then with
//     Cubic and the kernel's default buffers. Goodput is the receiving
//     kernel's count of in-order bytes (tcpi_bytes_received) over the
//     window; a window that opens while a loss is being repaired counts
//     the repaired out-of-order data too, which is why the window starts
//     late and is long (and why goodput can read above 100%). Goodput is
//     shown as a percentage of the configured rate. "wire" is what crossed
//     the link in the same window, counted by the emulator itself (the
//     bytes of the frames it forwarded to the client); with netem, which
//     has no such count here, it is estimated from goodput * 1514/1448
//     (Ethernet, IP and TCP-with-timestamps overhead per full segment).
//     100% wire is a saturated link; a wire share above 100% by more than
//     the window's edges can account for (a frame in flight and a
//     millisecond of counter skew at each edge, at least 0.5%) cannot be
//     and is reported as the flow's error.
//   - Loss: -losspkts (default 4000) UDP datagrams from server to client,
//     paced at half the link's byte rate and at half the packet rate the
//     limit allows (it counts the delay line), so the limit never drops;
//     the measured loss with its 95% Wilson interval, whether the
//     configured mean loss lies inside it, and the mean length of runs of
//     lost datagrams beside the configured one (1/(1-p) for independent
//     loss, 100/r for a Gilbert-Elliott profile such as 80:10,loss=ge:1/10).
//     For Gilbert-Elliott the interval is widened by the chain's
//     correlation (the variance of the loss fraction is (1+l)/(1-l) times
//     the binomial one, l = 1-p-r), since bursts make 4000 datagrams worth
//     fewer independent ones. With dup in the down direction the
//     configured loss is scaled by 1-dup (a duplicated datagram that is
//     lost still goes through once, as in netem), and the share that
//     arrived twice is reported with its interval; with reorder, the
//     share that arrived in under half the one-way delay (sent at once),
//     against 1/(gap-1 + 100/pct).
//   - Emulator CPU: the shaper process's CPU time (summed over its threads,
//     from /proc schedstat) during the two bulk flows, divided by the frames
//     that entered it (the egress counters of both veth ends; keeping
//     offloads, a super-packet is one frame there).
//   - Jitter, for a profile with jitter down: -jitter-probes (default
//     400) one-way UDP probes, spaced four times the jitter apart so one
//     rarely waits for the one before it, each probe's delay beyond the
//     configured one (less its serialisation and half the bare round
//     trip) against the distribution netem draws from
//     (Direction.JitterCDF): the Kolmogorov-Smirnov distance with its 5%
//     critical value, and five quantiles measured beside configured.
//   - A trace or a schedule, for a profile whose down direction has one
//     (the bulk flows and the loss run are then skipped; they assume a
//     link that stays put): for -timevarying (default 12 s) a UDP flood
//     of full frames at 1.5 times the trace's busiest second, and per
//     whole second the frames that left the link against what the
//     trace's opportunities carry; and datagrams 1 ms apart whose losses
//     show when each drop blackout really began and ended, against its
//     scheduled times. Also the changes applied, netem's longest wait for
//     the kernel to acknowledge one and the emulator's longest delay in
//     getting to one.
//
// A trace and a schedule, for example:
//
//	go run ./examples/calibrate -profiles "80:10,down.trace=cell:10/0.5 80:10,down.schedule=blackout:300ms/4s" -sweep ""
//
// Then, with -sweep (default "200 500 1000 2000"), one BBR flow and one
// Cubic flow over 5 ms RTT at each rate, and the highest rate at which
// either flow's wire utilisation stays within 5% of configured.
//
// With -iperf3 RATES (e.g. "10 100 1000 2000"; needs Debian's iperf3 on
// PATH), one iperf3 flow (-C cubic, client to server, -bulk rounded to
// seconds after 2 s omitted) across the bare veth pair twice, first with
// its offloads on ("bare veth, offloads on") and then wire-sized ("bare
// veth, wire-sized"), whatever -offload says: the machine's two
// ceilings; then, in the -offload mode, across an effectively unlimited
// link (2:100000) and across a 5 ms link of each rate: what a sender
// nobody here wrote gets. The wire share is the emulator's forwarded
// bytes (each wire segment's frame) inside iperf3's measured window. Each
// row shows its goodput as a share of each bare pair, the emulator's CPU
// seconds per GB (10^9 bytes) it forwarded and its CPU per wire packet
// forwarded, both directions. -profiles "" and -sweep "" leave only this
// series:
//
//	go run ./examples/calibrate -profiles "" -sweep "" -iperf3 "10 100 1000 2000"
//	go run ./examples/calibrate -offload keep -profiles "" -sweep "" -iperf3 "1000 2000 5000"
//
// With -gsoloss PROFILE (e.g. "5:2000:0.1": 5 ms RTT, 2000 Mbit/s, 0.1%
// loss, or Gilbert-Elliott loss such as "5:2000,loss=ge:0.10101/10", 1%
// in bursts of 10; a profile that duplicates, corrupts, reorders or
// follows a schedule or a trace is refused), a flood sent with
// UDP_SEGMENT across that link in the -offload mode: a sender in the
// server's namespace writes 1400-byte datagrams, each starting with its
// 4-byte big-endian sequence number, up to 32 per write (gso_size 1400;
// fewer where the link's packet limit is small), paced to -gsoloss-pace
// (default 60) percent of the rate, counting each datagram's 1442-byte
// frame, for -gsoloss-time (default 8 s); a receiver in the client's
// namespace, with UDP_GRO where the kernel takes it (a coalesced read is
// split at the segment size its control message gives), marks each number
// seen. The loss is the datagrams never seen, with its 95% Wilson
// interval (widened for Gilbert-Elliott's bursts as the loss run's is),
// whether the configured mean loss lies inside, and the mean length of
// runs of lost datagrams beside the model's. Beside it: the shaper's
// account of that direction (wire packets received, lost to the
// configured loss, dropped at the limit, failed writes, socket drops,
// oversize or unreadable frames, super-packets in and out) and the UDP
// RcvbufErrors and SndbufErrors of the two namespaces. Any drop but the
// configured loss, or a receiver's loss the shaper's does not account
// for, leaves the figure unjudged, with the reason.
//
// With -quicgso PROFILE (e.g. "5:1000:1"), one quic-go bulk transfer from
// server to client across that link for -bulk, on plain UDP sockets so
// that quic-go uses its GSO where the kernel has it: goodput over the last
// two thirds as a share of the rate (no target: over random loss, quic-go's
// NewReno is limited by its congestion window), whether quic-go reports
// GSO in use, and the shaper's share of that direction's datagrams lost to
// the configured loss with its 95% Wilson interval, its limit drops and
// the super-packets in and out. Together:
//
//	go run ./examples/calibrate -offload keep -profiles "" -sweep "" -iperf3 "1000 2000 5000" -gsoloss 5:2000:0.1 -quicgso 5:1000:1
//
// With -qdisc DISCIPLINES (e.g. "fifo codel fq_codel"), on -qdisc-profile
// (default 80:10) with the discipline in both directions: one Cubic flow
// from server to client for -bulk, and over its last two thirds the
// standing queue at the down bottleneck (the shaper's held bytes every
// 10 ms, less the one-way delay the delay line accounts for, as time at
// the rate; with netem, the discipline's own backlog) and a sparse flow of echoes 10 ms apart whose replies cross
// that queue (their round trip beyond the configured one), with the
// discipline's drops and marks:
//
//	go run ./examples/calibrate -profiles "" -sweep "" -qdisc "fifo codel fq_codel"
//
// Targets (the link's idle p50 error <= 0.1 ms and p99 error <= 0.5 ms,
// wire utilisation >= 95%, loss inside its interval; with iperf3 on a
// wire-sized link, a wire share of 95% of the rate up to 1 Gbit/s and 90%
// above, and the unlimited link at least 90% of the wire-sized bare pair;
// keeping offloads, 97% up to 1 Gbit/s, 95% up to 2 Gbit/s and 90%
// above, and the unlimited link at least 25% of the bare pair with its
// offloads on) are marked ok or MISS, or n/a where the bare pair with the
// same offloads did not carry the target in that run.
// The machine's other load spoils timing: run it on an otherwise idle
// machine, and read the emulator's priority line (SCHED_FIFO needs root).
//
// It runs as root, or as any user where unprivileged user namespaces are
// allowed: it then re-executes itself in a user and network namespace of
// its own (shapedlink.Reexec). There the kernel refuses SO_RCVBUFFORCE and
// SO_SNDBUFFORCE, so the BBR flow asks for its 32 MiB buffers with
// SO_RCVBUF and SO_SNDBUF, which the host's net.core.rmem_max and wmem_max
// cap; the buffers it got are recorded and noted under the table.
//
// Exit status: 0 when every profile, sweep rate, iperf3 flow, discipline,
// UDP_SEGMENT flood and quic-go transfer was measured; 1 when any could
// not be (its link, a probe, a bulk flow, the loss run, an iperf3 flow, a
// discipline's run, the flood or the transfer failed),
// with "N of M measurements failed" on stderr after the figures of what
// was measured; 2 for a usage error. -render measures nothing and exits 0,
// or 1 when the file is not a report it reads: missing, not a regular file
// (a pipe or a device is refused without reading it), over 64 MiB, or not
// a -json report.
package main
