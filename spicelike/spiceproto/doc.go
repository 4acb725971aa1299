// Package spiceproto knows just enough of the SPICE remote-display
// protocol to follow a live connection byte by byte and say which message
// passed when: the link stage, the data message headers, the channel type,
// what display messages draw and which keys the inputs channel carries.
//
// It does not speak SPICE. It never builds a session, decrypts a ticket or
// decodes an image: a tunnel that carries a real client's and a real
// spice-server's bytes unchanged feeds them to a Conn, and the Conn
// returns each message once its last byte has passed. The constants and
// layouts are those of spice-protocol's spice/protocol.h and
// spice/enums.h and spice-common's spice.proto, and the order of the link
// stage is the one spice-gtk's channel code follows.
//
// # What a connection carries
//
// SPICE opens one TCP connection per channel (main first, then display,
// inputs, cursor, ... once the main channel's init has arrived). Each
// starts with the link stage:
//
//	client → server  link header (magic "REDQ", version 2.2, size) + SpiceLinkMess:
//	                 connection id, channel type and id, the client's capabilities
//	server → client  link header + SpiceLinkReply: error, RSA public key, the server's capabilities
//	client → server  the authentication mechanism (a uint32), when the server offers
//	                 a choice (common capability PROTOCOL_AUTH_SELECTION), then the
//	                 128-byte RSA-encrypted ticket
//	server → client  the link result (a uint32, 0 for success)
//
// after which both directions carry data messages, each with a header:
// the mini header (type u16, size u32) when both ends announced the common
// capability MINI_HEADER in the link stage, else the full header (serial
// u64, type u16, size u32, sub-list offset u32). Every number is
// little-endian.
//
// # What it decodes
//
//   - Display channel, server to client: the drawing operations
//     (draw_fill ... draw_alpha_blend, draw_composite) and copy_bits start
//     with SpiceMsgDisplayBase (surface id, box, clip); their Draw gives
//     the surface and box. Video streams are followed from stream_create
//     (surface and destination) to their frames (stream_data,
//     stream_data_sized), whose Draw is the stream's destination.
//     surface_create with the primary flag says which surface is the
//     screen.
//   - Inputs channel, client to server: key_down, key_up and key_scancode,
//     with the key code and whether it is a press.
//
// Every other message is returned with its type, name (where known) and
// size only. SASL authentication is not followed (give spice-server a
// ticket), and neither is TLS (the bytes would not be SPICE).
//
// # Use
//
// One Conn per TCP connection, fed from each direction's goroutine as the
// bytes pass; Feed returns the messages completed by the bytes given. A
// connection the parser cannot follow (not SPICE, a protocol version it
// does not know, SASL) makes Feed return a *FeedError, which wraps
// ErrNotSpice and names the direction whose bytes were bad; the bytes
// should go on passing unchanged. That error ends the parsing of the
// connection: every later Feed, of either direction, returns it again.
// A Msg's Stage is a spicetrace.Stage (package spicelike/spicetrace),
// as traces record it.
//
// A tunnel that routes each connection by its channel reads the client's
// link message itself (ParseLinkHeader, ParseLinkMess) before relaying,
// and learns the channel type and the capabilities the client announced.
//
// What a Conn keeps is bounded whatever it is fed: the first bytes of the
// part being read, at most 64 KiB of client bytes waiting for the server's
// reply, and at most 256 live video streams. Going beyond a bound is an
// error, as for any other bytes that are not SPICE.
package spiceproto
