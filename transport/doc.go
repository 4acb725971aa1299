// Package transport opens a session of N channels between a client and a
// server over one of five arms, and records what was in force.
//
// A channel is a reliable, ordered byte stream in both directions (an
// io.ReadWriteCloser that also implements Channel). The arms differ only in
// how channels are carried:
//
//   - ArmTCP: one TCP connection per channel, TCP_NODELAY on each, the
//     congestion control pinned with TCP_CONGESTION on both ends (or the
//     host default, recorded), optional TCP_NOTSENT_LOWAT.
//   - ArmQUIC: one QUIC connection (quic-go, the module's go.mod says which
//     version) with one bidirectional stream per channel.
//   - ArmQUICPerChannel: one QUIC connection with one stream per channel,
//     each on its own UDP socket: a handshake and a congestion window per
//     channel.
//   - ArmQUICPriority: ArmQUIC with one channel's stream (PriorityChannel)
//     sent ahead of the others on both ends.
//   - ArmTCPMux: every channel framed over one TCP connection, set up as
//     ArmTCP's are, each channel with a window as a QUIC stream has
//     (DialMux, ListenMux; mux_wire.go has the frames): one connection's
//     head-of-line blocking without QUIC.
//
// The server calls Listen and then Accept for each session; the client calls
// Dial (ListenMux and DialMux for ArmTCPMux). Both ends get the channels in the same order, because the client
// writes a small header (session id, channel index, channel count) as the
// first bytes of every channel and the server orders by it, never by accept
// order. Server and client may run in different processes and network
// namespaces: everything they share is the address, Options.Channels and,
// for QUIC, the certificate PEM from NewCertificate. The transport makes
// its sockets through Options.Listen, ListenPacket and DialContext when they
// are set (the way quic-go's Transport takes a PacketConn), so a caller
// decides where they live, for example in either namespace of a shaped
// link, and calls Listen and Dial from any goroutine; left nil, sockets are
// made with the net package where the process is.
//
// # What is pinned on the QUIC arms
//
// The QUIC arms use TLS 1.3 with ALPN, a self-signed certificate that the
// client verifies as its only root (no InsecureSkipVerify), 1400-byte
// datagrams (DatagramSize) with path MTU discovery off, a 16 MiB connection
// and 8 MiB stream receive window (initial = maximum, so no auto-tuning), and
// enough incoming streams for the session.
//
// quic-go's congestion control is NewReno and cannot be replaced: there is
// no Cubic or BBR to match the TCP arm with. State reports it as
// QUICCongestionControl; the like-for-like comparison pins the TCP arm to
// "reno". Options.CongestionControl is a TCP setting: the QUIC arms refuse
// it rather than record a controller that was not in force, so leave it
// empty for them.
//
// Segmentation offload is off unless Options.AllowGSO is set. A netem-style
// queue counts packets, and a UDP_SEGMENT write reaches it as one
// super-packet, so GSO would change what the link's queue limit and loss
// mean. It is switched off with a wrapper around the UDP socket rather than
// quic-go's process-wide QUIC_GO_DISABLE_GSO variable, so one process can run
// a positive control beside the real arms; the wrapper keeps ECN, batched
// receive and socket buffer sizing (docs/transport.md has how). A session
// fails if quic-go still reports GSO with the wrapper on, and the recorded
// State carries ConnectionState().GSO and the largest packet actually sent.
// A net.PacketConn that is not a UDP socket (Options.ListenPacket may
// return one: shapedlink's in-process link does) is given to quic-go as it
// is, since it cannot do GSO; quic-go then sends and receives one datagram
// per call, without ECN, and State names the conn's type.
//
// # Driving quic-go yourself
//
// Code that runs its own protocol over quic-go (HTTP/3, say) across a
// shaped link can take two pieces without the arms: WithoutGSO wraps the
// UDP socket it gives quic-go, so that socket sends wire-sized packets,
// and Certificate.TLSConfigs returns a matched server and client
// tls.Config (the client trusts the certificate alone and asks for
// ServerName, so no InsecureSkipVerify), with the caller's ALPN:
//
//	cert, err := transport.NewCertificate()
//	serverTLS, clientTLS, err := cert.TLSConfigs("h3")
//	pc, err := link.Server().ListenPacket(ctx, "udp", addr)
//	pc, err = transport.WithoutGSO(pc)
//	ln, err := (&quic.Transport{Conn: pc}).Listen(serverTLS, &quic.Config{})
//
// To run this project's workload over an arm in a few lines, see package
// measure.
//
// # What is recorded
//
// Session.State reads, for each end separately: the congestion control in
// force (read back with getsockopt, not echoed from Options), socket options
// and TCP_INFO for every TCP connection (optionally as a time series), and
// for every QUIC connection its ConnectionState, ConnectionStats, the
// transport parameters both sides announced, and a qlog-derived series of
// congestion window, bytes in flight, congestion-state changes and loss
// events. With Options.QlogDir set each QUIC connection also writes a qlog
// file (JSON-SEQ, readable by qvis). State is plain data and marshals to JSON.
// The in-memory qlog recorder is always on (docs/cpucost.md has its cost).
//
// Session.ConnectTime is measured on the client from the first dial until
// every channel is usable: for TCP the connections are established (one
// round trip) and the headers written; for QUIC the handshake is complete
// (one round trip) and every stream opened with its header written. Channels
// are dialled concurrently. The server does not acknowledge the headers, so
// connect time includes no extra round trip on any arm.
//
// # Path changes
//
// Session.Migrate moves a client session's QUIC connections to a new local
// address (a new socket, quic-go's AddPath, Probe and Switch) and reports
// when each path was validated and switched to; for the tcp arm it returns
// ErrCannotMigrate, since a TCP connection cannot leave its address pair.
// A client's QUIC connection, once up, counts a send that finds no route
// (as one does while the client's address changes) as a lost packet
// instead of ending (QUICConnState.UnroutableDrops); a dial fails on it.
// Session.RemoteAddrs and Session.ConnErrors let either end watch, without
// disturbing the sockets, where its connections send and whether they have
// ended.
//
// # Channels that arrive over time: carriers
//
// A Session has its N channels from the start. A tunnel in front of a real
// application cannot know N: a SPICE client opens its main channel first
// and the others only after the main channel's init. DialCarrier and
// ListenCarrier carry such channels one at a time over the same arms (not
// ArmQUICPriority): Carrier.Open makes a new TCP connection (ArmTCP), a new
// stream on the one QUIC connection dialled with the carrier (ArmQUIC), or
// a new QUIC connection with one stream (ArmQUICPerChannel), writes a small
// carrier header naming the channel's index, and CarrierListener.Accept
// hands each channel over as it arrives. The QUIC settings, the GSO-off
// wrapper, the certificate, the socket hooks, the congestion-control
// pinning and State are a Session's. See carrier.go for the header.
//
// A carrier listener is meant to face other hosts, so it is hardened as a
// server must be. With Options.CarrierSecret, a channel's header carries
// an HMAC proof that its client holds the secret, and anything else is
// refused; without it, anyone who reaches the address gets a channel (the
// QUIC arms' certificate proves the server to the client, never the
// client). What it holds at once is bounded in all and per peer
// (Options.CarrierLimit, CarrierPeerLimit); it backs off and goes on when
// accepting fails for want of file descriptors; and its State lists the
// live connections and only the last 64 that ended.
//
// # What it is not
//
// transport does not shape links, generate workload or compute statistics;
// it only opens sessions and reports what they ran with. Only Linux is
// supported.
package transport
