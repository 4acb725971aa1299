// Package spicetrace is the file format of a SPICE session's message trace:
// one record per protocol message, per channel and direction, with when it
// passed, what it was and how many bytes it took on the wire.
//
// A trace is written by each end of a SPICE tunnel (examples/spicetunnel),
// read by the live-session harness to compute key-to-draw latency, and read
// by spicelike to replay a real session's shape over the bench's channels.
// It lives apart from the SPICE protocol parser (spicelike/spiceproto) and
// from spicelike itself so that spicelike can read traces without knowing
// anything about SPICE's wire format, sockets or tunnels: this package
// knows only the records. The parser's Msg.Stage is this package's Stage.
//
// # The format
//
// JSON lines (UTF-8, one JSON object per line). The first line is the
// Header: the format name ("quicbench.spicetrace/1"), which end of the
// tunnel wrote the trace ("client" or "server") and the wall-clock time
// that is t = 0. Every further line is one Record:
//
//	{"t_ns":1523000,"dir":"s2c","ch":1,"chtype":"display","chid":0,"stage":"data",
//	 "type":304,"name":"draw_copy","size":2188,"draw":{"surface":0,"primary":true,
//	 "box":{"top":12,"left":6,"bottom":25,"right":12}}}
//
// The fields:
//
//   - t_ns: nanoseconds since the header's start, taken when the message's
//     last byte was read by the end that wrote the trace (a message is
//     complete, and can be acted on, only then).
//   - dir: "c2s" (client to server) or "s2c".
//   - ch: the tunnel's index of the TCP connection the message travelled
//     on, in the order the client opened them (SPICE opens one connection
//     per channel); chtype and chid are the SPICE channel type and id from
//     the connection's link message, once it has been read.
//   - carrier: the tunnel's carrier id (16 hex digits), the same at both
//     ends. A server end serves any number of carriers, whose channels may
//     share an index: carrier and ch together name a connection.
//   - stage: "link" for the link stage (link message, reply, auth
//     mechanism, ticket, link result), "data" after it.
//   - type and name: the data message's type number and, where the parser
//     knows it, its name; for the link stage, type is 0 and name says which
//     part it was.
//   - size: bytes on the wire, the data header (6 bytes with the mini
//     header, 18 without) included.
//   - draw: for display messages that draw, the surface and the drawn box
//     in surface coordinates (top and left inclusive, bottom and right
//     exclusive), and whether the surface is the primary (the screen).
//   - key: for the inputs channel's key messages, the key code and whether
//     it is a press.
//   - tag: empty when written by a tunnel; analysis may label records
//     ("key", "echo", "busy") for a replay (see spicelike).
//
// Fields that do not apply are left out. Readers must ignore fields they
// do not know, so the format can grow without a new version.
//
// # Use
//
// A Writer is safe for concurrent use: every relay goroutine of a tunnel
// writes into the same trace. Read parses a whole trace and says, with the
// line number, what is wrong with a line it cannot take.
package spicetrace
