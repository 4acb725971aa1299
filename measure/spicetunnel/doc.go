// Package spicetunnel carries a real SPICE session over one of the
// transport package's arms and times every message at both ends: the
// client leg the Kerbside question is about, in Go.
//
//	SPICE client ──TCP──▶ ClientEnd ══ carrier (tcp | quic | quic-per-channel | tcp-mux | quinn-<cc>) ══▶ ServerEnd ──TCP──▶ spice-server
//
// A SPICE client opens one TCP connection per channel: main first, the
// others once the main channel's init has arrived, so how many channels a
// session has is not known when it starts. The ClientEnd therefore opens
// a new carrier channel for every connection it accepts (a TCP connection,
// a stream of the one QUIC connection, a QUIC connection of its own, or
// a channel framed over the one TCP connection, or a stream of quinn's one
// connection, per measure.DialCarrier), and the ServerEnd opens a new TCP connection
// to spice-server for every carrier channel that arrives. Bytes pass
// through unchanged, in both directions, and a half-close passes through
// too. Each read is forwarded before it is parsed, so following the
// protocol adds nothing to the bytes' path but the read itself.
//
// Both ends follow each connection with spiceproto and, with a Tracer,
// write one spicetrace record per message: when its last byte was read,
// its direction, the carrier's id and channel index (the same at both
// ends; a server end serves any number of carriers, whose indices
// repeat), the SPICE channel type, the message type and size, and for
// display draws the box, for key messages the key. Events gives the same messages to
// the caller as they pass (the live-session harness uses them to know the
// session is up). A connection the parser cannot follow (TLS, SASL) is
// still carried, and its parse error is reported in ChannelStats.
//
// # What the server end exposes
//
// The ServerEnd opens a connection to spice-server for every channel its
// carrier listener hands over, and passes the bytes unchanged: a channel is
// a raw pipe to spice-server, reached without spice-server's own TLS. So
// who may open a channel is decided by the listener. With
// transport.Options.CarrierSecret set on both ends, a channel's header must
// prove its client holds the secret (an HMAC over the header, with a time
// and a nonce against replays), and anyone else is refused before
// spice-server is dialled; without it, anyone who reaches the listener's
// address gets a pipe. The QUIC arms' certificate proves the server to the
// client and nothing about the client. The listener bounds the channels it
// holds, in all and per peer, and refusals are logged at a bounded rate.
// The tcp and tcp-mux arms are plaintext: a secret keeps others from opening channels,
// but anyone on the path still reads and can alter the session, as they
// could SPICE's own plain port; the QUIC arms encrypt it.
//
// # Use
//
// RunEnd runs either end on its own from an EndConfig (addresses,
// certificate files, trace file, transport options with the secret),
// as examples/spicetunnel does; ServerEnd and ClientEnd are its parts,
// for a caller that holds the listener or carrier itself, as
// measure/spicelive's roles do.
//
// What is reused from the transport package: the arms (carriers), the
// QUIC settings and GSO-off wrapper, the certificate, the socket hooks
// through which sockets live in a namespace, the congestion-control
// pinning and the State record.
package spicetunnel
