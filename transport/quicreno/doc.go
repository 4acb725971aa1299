// Package quicreno is a TCP congestion control, written as BPF and
// registered with the kernel as a tcp_congestion_ops struct_ops, that does
// what quic-go v0.65's controller does, so that a comparison of TCP with
// quic-go can hold the controller fixed and compare the transports alone.
//
// quic-go's only controller is Reno with a back-off to 0.7 of the window
// (floor 2 packets), an initial window of 32 packets, pacing, HyStart's
// delay-based slow-start exit, no window collapse on a probe timeout, and
// undo of a spurious loss. Kernel reno backs off to 0.5, starts at 10
// packets, is not paced without fq, and drops to one packet on a
// retransmission timeout. quicreno keeps the kernel's loss detection,
// recovery (PRR) and ACK policy and changes the rest:
//
//   - ssthresh: the window times BetaPercent, rounded to a packet, at
//     least MinWindow;
//   - cong_avoid: slow start and one packet per window acked, as reno;
//   - init: the window set to InitialWindow at the start of a connection,
//     and SK_PACING_NEEDED, so the kernel paces the socket itself at
//     cwnd/srtt times tcp_pacing_ss_ratio (200%) in slow start and
//     tcp_pacing_ca_ratio (120%; quic-go 125%) after;
//   - pkts_acked: HyStart as quic-go runs it (the lowest of a round's first
//     8 RTT samples against the minimum RTT plus an eighth of it, 4 to
//     16 ms; slow start ends at 16 packets or more);
//   - set_state: on entering Loss (a retransmission timeout) the window is
//     ssthresh rather than one packet;
//   - undo_cwnd: the window before the loss, as reno.
//
// Load registers it under Name for every network namespace of the host
// until Close; sockets then choose it with TCP_CONGESTION (transport's
// Options.CongestionControl). Loading needs root in the initial user
// namespace; CheckLoad says why it would fail without trying. The BPF
// object is built from quicreno.bpf.c by gen.sh (go generate; clang and
// bpftool) and committed, so building the module needs no compiler.
//
//	ctl, err := quicreno.Load(quicreno.Defaults())
//	if err != nil {
//		return err // e.g. not root: choose reno instead
//	}
//	defer ctl.Close()
//	opts := transport.Options{Channels: 5, CongestionControl: quicreno.Name}
//
// docs/controllers.md shows how closely one flow of it follows quic-go.
package quicreno
