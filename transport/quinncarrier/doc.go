// Package quinncarrier runs quinn, the QUIC stack of the bench the
// project's question came from, as a carrier: each channel's TCP
// connection is carried as one stream of one quinn connection between a
// client end and a server end, so the Go workload runs over quinn as it
// runs over quic-go.
//
//	workload client ──TCP──▶ client end ══ one quinn connection, a stream per channel ══▶ server end ──TCP──▶ workload server
//
// The ends are one small Rust program, quicbench-quinn (quinn/ at the
// repository's root), built offline from Debian's packaged crates by
// quinn/build.sh; Binary finds or builds it. StartServer starts the
// server end, listening on a UDP address and connecting each channel's
// streams to that channel's TCP target; StartClient starts the client end
// towards it, listening on a TCP port per channel (End.Ready's Channels).
// Each starts on this host, in the calling thread's network namespace or
// a socket's (NamespaceOf: a link's end), and returns once the end is
// ready. End.Stop stops it with SIGTERM and reads back what it recorded
// (EndStats: the settings in force, each connection's RTT, window, losses
// and datagrams, the socket's counts). measure's quinn arms run each
// role's end this way.
//
// Every end runs with the settings the reference pinned: 1400-byte
// datagrams (quinn 0.9 has no path-MTU discovery), connection and stream
// windows of 16 MB and 8 MB, the congestion controller of Config (cubic,
// bbr or newreno, with quinn's initial window for it unless Config sets
// one), TLS 1.3, and no segmentation offload: the program's socket takes
// quinn's offload batches apart and writes every datagram as a packet of
// its own, so a link's queue and egress counters see wire-sized packets
// (gsocheck judges them as it judges quic-go's). Each end prints its
// settings back when it is ready, the controller and its initial window
// read from a controller quinn made (End.Ready). docs/quinn.md says
// how to build it, which quinn it is and what can and cannot be set.
//
// The ends write nothing but their certificate and stats files in
// Config.Dir. On Linux an end dies with this process (a parent-death
// signal), so killing the process leaves no end and no socket behind.
package quinncarrier
