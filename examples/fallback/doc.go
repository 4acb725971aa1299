// Command fallback measures what it costs a client to try QUIC first and
// fall back to per-channel TCP when UDP is blocked: how long until the
// session is usable, against dialling TCP directly and against QUIC with
// UDP open.
//
//	go run ./examples/fallback                                  # 80:10 and 150:2, loss 0, 10 connects per arm
//	go run ./examples/fallback -losses "0 1" -connects 20
//	go run ./examples/fallback -give-up 250ms -workdir results/fallback-250ms
//	go run ./examples/fallback -summary -workdir results/fallback  # the table again
//
// The experiment is package measure/fallback's; this command parses its
// flags, runs it and prints the summary. For each profile (-profiles,
// shapedlink's grammar, each run at every -losses level) and arm it
// builds a fresh link (shapedlink.New), starts a server process in the
// server namespace that listens for both arms on one port number
// (transport.ListenFallback: QUIC on UDP 4433, TCP on 4433), and a client
// process in the client namespace that makes -connects connects one after
// another, -gap apart, each session closed before the next. The processes
// are this binary re-executed, as in measure/bench. The arms:
//
//   - tcp: transport.Dial with the tcp arm, -channels TCP connections
//     dialled concurrently (reno, as the headline pins).
//   - fallback-open: transport.DialFallback with UDP open. QUIC should be
//     used; this is QUIC's connect time through the dialer a deployment
//     would use, and shows whether the give-up time ever cuts off a
//     working handshake.
//   - fallback-blocked: transport.DialFallback while shapedlink's BlockUDP
//     drops every UDP packet leaving the client namespace (an nftables
//     rule on the client veth's egress hook, with a counter). Nothing comes
//     back, so the dialer waits out -give-up and then dials TCP.
//
// A connect's time is the client's, from just before the dial until the
// dial returned a usable session: every channel connected (TCP) or
// handshaken with its stream open (QUIC) and its header written. For the
// fallback arms each connect also records transport.FallbackResult: when
// the QUIC attempt ended and how, when TCP started, and when the session
// was ready. After each connect the client sends one byte on channel 0
// and waits for the server's echo (not counted) so that every recorded
// session is known to carry data; the server counts the sessions it
// accepted per arm.
//
// Results go to -workdir (default results/fallback): one JSON record per
// profile and arm, <profile>/<arm>.json, written atomically, with the
// server and client logs beside it in <profile>/<arm>/. A rerun skips
// what is recorded (and re-measures what was recorded as failed), and
// refuses a directory recorded with other -connects, -channels or
// -give-up. The summary table gives, per profile and arm, the median and
// range of connect time, the difference from direct TCP's median, how the
// QUIC attempts ended, what carried the sessions, and the UDP drop counter
// that proves the block was in force; a second table splits the fallback
// into the wait for QUIC and TCP's own part.
//
// It runs as root, or as any user where unprivileged user namespaces are
// allowed: it then re-executes itself in a user and network namespace of
// its own (shapedlink.Reexec). Exit status: 0 when every connect was
// measured; 1 when any was not (a connect that returned an error, or every
// connect of an arm recorded as failed), with "N of M measurements
// (connects) failed" on stderr after the summary; 2 for a usage error.
// -summary measures nothing and exits 0 when it could read the records.
package main
