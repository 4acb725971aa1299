// Command calibrate measures how faithfully a shapedlink link reproduces
// its profile: configured against measured, per profile, with the figures
// the emulator's users need to trust it as they trust netem.
//
//	go run ./examples/calibrate                      # table on stdout
//	go run ./examples/calibrate -json > calib.json   # the same figures as JSON
//	go run ./examples/calibrate -profiles "80:10 80:10:1" -bulk 10s
//	go run ./examples/calibrate -backend netem       # calibrate kernel netem instead
//	go run ./examples/calibrate -render calib.json   # the table for a saved report
//
// For each profile (default 80:10, 150:2, 20:100 and 5:1000, each at 0% and
// 1% loss; -profiles takes the shapedlink grammar) it builds a fresh link
// and measures, in this order:
//
//   - Idle round trip: -echoes (default 200) UDP echoes of 64 bytes from
//     the client to the server, one every 10 ms, each stamped when sent.
//     The expected round trip is the profile's RTT plus the serialisation
//     of the 106-byte frame in each direction (what netem gives too); the
//     table shows the measured p50 and p99 minus that.
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
//     100% wire is a saturated link; a wire share above 100.5% cannot be
//     and is reported as the flow's error.
//   - Loss: -losspkts (default 4000) UDP datagrams from server to client,
//     paced at half the link's byte rate and at half the packet rate the
//     limit allows (it counts the delay line), so the limit never drops;
//     the measured
//     loss with its 95% Wilson interval, and whether the configured loss
//     lies inside it.
//   - Emulator CPU: the shaper process's CPU time (summed over its threads,
//     from /proc schedstat) during the two bulk flows, divided by the frames
//     that entered it (the egress counters of both veth ends).
//
// Then, with -sweep (default "200 500 1000 2000"), one BBR flow and one
// Cubic flow over 5 ms RTT at each rate, and the highest rate at which
// either flow's wire utilisation stays within 5% of configured.
//
// Targets (idle p50 error <= 0.1 ms, p99 error <= 0.5 ms, wire
// utilisation >= 95%, loss inside its interval) are marked ok or MISS.
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
// Exit status: 0 when every profile and sweep rate was measured; 1 when
// any could not be (its link, echoes, a bulk flow or the loss run failed),
// with "N of M measurements failed" on stderr after the figures of what
// was measured; 2 for a usage error. -render measures nothing and exits 0.
package main
