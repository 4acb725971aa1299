// Package spicetunnel carries a real SPICE session over one of the
// transport package's arms and times every message at both ends: the
// client leg the Kerbside question is about, in Go.
//
//	SPICE client ──TCP──▶ ClientEnd ══ carrier (tcp | quic | quic-per-channel) ══▶ ServerEnd ──TCP──▶ spice-server
//
// A SPICE client opens one TCP connection per channel: main first, the
// others once the main channel's init has arrived, so how many channels a
// session has is not known when it starts. The ClientEnd therefore opens
// a new carrier channel for every connection it accepts (a TCP connection,
// a stream of the one QUIC connection, or a QUIC connection of its own,
// per transport.DialCarrier), and the ServerEnd opens a new TCP connection
// to spice-server for every carrier channel that arrives. Bytes pass
// through unchanged, in both directions, and a half-close passes through
// too. Each read is forwarded before it is parsed, so following the
// protocol adds nothing to the bytes' path but the read itself.
//
// Both ends follow each connection with spiceproto and, with a Tracer,
// write one spicetrace record per message: when its last byte was read,
// its direction, the carrier's channel index (the same at both ends), the
// SPICE channel type, the message type and size, and for display draws
// the box, for key messages the key. Events gives the same messages to
// the caller as they pass (the live-session harness uses them to know the
// session is up). A connection the parser cannot follow (TLS, SASL) is
// still carried, and its parse error is reported in ChannelStats.
//
// What is reused from the transport package: the arms (carriers), the
// QUIC settings and GSO-off wrapper, the certificate, the socket hooks
// through which sockets live in a namespace, the congestion-control
// pinning and the State record. The commands are examples/spicetunnel
// (either end on its own) and examples/spicelive (a live session over a
// shaped link).
package spicetunnel
