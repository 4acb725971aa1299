// Package quicbench measures transports over an emulated network link
// between Linux network namespaces.
//
// The module is a set of small packages, each with one concern, that
// compose in the commands under examples/ (or in your own code):
//
//   - shapedlink builds the link: two network namespaces joined by a veth
//     pair, shaped per direction with delay, rate, a packet-counted queue
//     limit and random loss. It uses kernel netem where the kernel has it and
//     a userspace emulator with the same semantics where it does not. It also
//     samples the queue, adds nftables rules and records host state.
//   - spicelike is the workload: five SPICE-shaped channels (one saturating,
//     one interactive echo, three quiet) over any io.ReadWriter.
//   - transport opens a session of N channels between two addresses: N TCP
//     connections, one QUIC connection with N streams, or one QUIC connection
//     per channel, and records what was in force.
//   - stats turns round-trip samples from repeated runs into per-cell
//     percentiles, a spread, a threshold and a better/worse/unresolved
//     verdict.
//   - gsocheck decides from queue samples or egress counters whether
//     segmentation offload was really off.
//   - measure composes the others for importers: one arm of the workload
//     across a link (or loopback) in one call, both ends in the calling
//     process, returning what stats takes.
//
// None of the packages above measure imports another for its logic: the link
// knows nothing of QUIC or SPICE, the workload nothing of sockets, the
// statistics nothing but numbers. Composition happens in measure and its
// packages (the matrix, the records, the summary, the experiments); the
// commands under examples/ are flags over them.
package quicbench
