package spiceproto

import "fmt"

// The link stage's fixed values (spice-protocol's spice/protocol.h).
const (
	// magic is the link header's first four bytes, "REDQ", read as a
	// little-endian uint32.
	magic uint32 = 'R' | 'E'<<8 | 'D'<<16 | 'Q'<<24
	// versionMajor and versionMinor are the protocol version every current
	// client and server announce. A link header with another major version
	// is refused.
	versionMajor = 2
	versionMinor = 2

	// LinkHeaderSize is the link header: magic, major, minor, size.
	LinkHeaderSize = 16
	// linkMessSize is the fixed part of the client's link message, before
	// its capabilities.
	linkMessSize = 18
	// pubKeyBytes is the server's RSA public key in the link reply
	// (SPICE_TICKET_PUBKEY_BYTES: a 1024-bit key, DER-encoded).
	pubKeyBytes = 1024/8 + 34
	// linkReplySize is the fixed part of the server's link reply.
	linkReplySize = 4 + pubKeyBytes + 12
	// TicketSize is the client's RSA-encrypted ticket (password).
	TicketSize = 1024 / 8
	// authMechanismSize and linkResultSize are one little-endian uint32.
	authMechanismSize = 4
	linkResultSize    = 4

	// fullHeaderSize is a data message header without the mini-header
	// capability: serial u64, type u16, size u32, sub_list u32.
	fullHeaderSize = 18
	// miniHeaderSize is the header when both ends announced
	// CapMiniHeader: type u16, size u32.
	miniHeaderSize = 6
)

// Cap is a capability's bit number in the capability words of the link
// message and reply (LinkMess.CommonCaps, LinkReply.CommonCaps, and their
// ChannelCaps, whose numbers each channel type defines).
type Cap uint32

// The common capabilities, which every channel type shares. CapAuthSpice
// and CapAuthSASL are also the numbers of the authentication mechanisms
// the client may choose (a uint32 after the link reply).
const (
	CapProtocolAuthSelection Cap = 0
	CapAuthSpice             Cap = 1
	CapAuthSASL              Cap = 2
	CapMiniHeader            Cap = 3
)

// HasCap reports whether capability c is set in caps (words of 32 bits, as
// the link messages carry them).
func HasCap(caps []uint32, c Cap) bool {
	if int(c/32) >= len(caps) {
		return false
	}
	return caps[c/32]&(1<<(c%32)) != 0
}

// Caps returns the capability words with the given capabilities set.
func Caps(cs ...Cap) []uint32 {
	var out []uint32
	for _, c := range cs {
		for len(out) <= int(c/32) {
			out = append(out, 0)
		}
		out[c/32] |= 1 << (c % 32)
	}
	return out
}

// LinkErr is the error code of a link reply (SpiceLinkErr), which the
// server also sends as the link result after the ticket.
type LinkErr uint32

// The link errors this package tells apart.
const (
	LinkErrOK               LinkErr = 0
	LinkErrPermissionDenied LinkErr = 7
)

// ChannelType is a SPICE channel's type, as the link message names it.
type ChannelType uint8

// The channel types.
const (
	ChannelMain      ChannelType = 1
	ChannelDisplay   ChannelType = 2
	ChannelInputs    ChannelType = 3
	ChannelCursor    ChannelType = 4
	ChannelPlayback  ChannelType = 5
	ChannelRecord    ChannelType = 6
	ChannelTunnel    ChannelType = 7
	ChannelSmartcard ChannelType = 8
	ChannelUSBRedir  ChannelType = 9
	ChannelPort      ChannelType = 10
	ChannelWebDAV    ChannelType = 11
)

var channelNames = [...]string{"", "main", "display", "inputs", "cursor", "playback", "record", "tunnel",
	"smartcard", "usbredir", "port", "webdav"}

// String is the channel type's lower-case name ("display"), or
// "channel-N" for a type this package does not know.
func (t ChannelType) String() string {
	if int(t) < len(channelNames) && t != 0 {
		return channelNames[t]
	}
	return fmt.Sprintf("channel-%d", t)
}

// MsgType is a data message's type. Its meaning depends on the channel
// type and the direction (see MessageName), except for the types below 101,
// which every channel shares.
type MsgType uint16

// Message types this package decodes or names (spice-protocol's spice/enums.h).
const (
	// Server to client, every channel.
	MsgSetAck MsgType = 3
	MsgPing   MsgType = 4
	// Client to server, every channel.
	MsgcAck  MsgType = 2
	MsgcPong MsgType = 3

	// Display channel, server to client.
	MsgDisplayMode             MsgType = 101
	MsgDisplayCopyBits         MsgType = 104
	MsgDisplayStreamCreate     MsgType = 122
	MsgDisplayStreamData       MsgType = 123
	MsgDisplayStreamClip       MsgType = 124
	MsgDisplayStreamDestroy    MsgType = 125
	MsgDisplayStreamDestroyAll MsgType = 126
	MsgDisplayDrawFill         MsgType = 302
	MsgDisplayDrawCopy         MsgType = 304
	MsgDisplayDrawAlphaBlend   MsgType = 313
	MsgDisplaySurfaceCreate    MsgType = 314
	MsgDisplaySurfaceDestroy   MsgType = 315
	MsgDisplayStreamDataSized  MsgType = 316
	MsgDisplayDrawComposite    MsgType = 318

	// Display channel, client to server.
	MsgcDisplayInit MsgType = 101

	// Inputs channel, client to server.
	MsgcInputsKeyDown     MsgType = 101
	MsgcInputsKeyUp       MsgType = 102
	MsgcInputsKeyScancode MsgType = 104
)

// surfaceFlagPrimary marks the primary surface (the screen) in a
// surface-create message.
const surfaceFlagPrimary = 1

var commonServerNames = map[MsgType]string{1: "migrate", 2: "migrate_data", 3: "set_ack", 4: "ping",
	5: "wait_for_channels", 6: "disconnecting", 7: "notify", 8: "list"}

var commonClientNames = map[MsgType]string{1: "ack_sync", 2: "ack", 3: "pong", 4: "migrate_flush_mark",
	5: "migrate_data", 6: "disconnecting"}

var displayServerNames = map[MsgType]string{101: "mode", 102: "mark", 103: "reset", 104: "copy_bits",
	105: "inval_list", 106: "inval_all_pixmaps", 107: "inval_palette", 108: "inval_all_palettes",
	122: "stream_create", 123: "stream_data", 124: "stream_clip", 125: "stream_destroy", 126: "stream_destroy_all",
	302: "draw_fill", 303: "draw_opaque", 304: "draw_copy", 305: "draw_blend", 306: "draw_blackness",
	307: "draw_whiteness", 308: "draw_invers", 309: "draw_rop3", 310: "draw_stroke", 311: "draw_text",
	312: "draw_transparent", 313: "draw_alpha_blend", 314: "surface_create", 315: "surface_destroy",
	316: "stream_data_sized", 317: "monitors_config", 318: "draw_composite", 319: "stream_activate_report",
	320: "gl_scanout_unix", 321: "gl_draw"}

var displayClientNames = map[MsgType]string{101: "init", 102: "stream_report", 103: "preferred_compression",
	104: "gl_draw_done", 105: "preferred_video_codec_type"}

var inputsServerNames = map[MsgType]string{101: "init", 102: "key_modifiers", 111: "mouse_motion_ack"}

var inputsClientNames = map[MsgType]string{101: "key_down", 102: "key_up", 103: "key_modifiers",
	104: "key_scancode", 111: "mouse_motion", 112: "mouse_position", 113: "mouse_press", 114: "mouse_release"}

var mainServerNames = map[MsgType]string{101: "migrate_begin", 102: "migrate_cancel", 103: "init",
	104: "channels_list", 105: "mouse_mode", 106: "multi_media_time", 107: "agent_connected",
	108: "agent_disconnected", 109: "agent_data", 110: "agent_token", 111: "migrate_switch_host",
	112: "migrate_end", 113: "name", 114: "uuid", 115: "agent_connected_tokens"}

var mainClientNames = map[MsgType]string{101: "client_info", 102: "migrate_connected",
	103: "migrate_connect_error", 104: "attach_channels", 105: "mouse_mode_request", 106: "agent_start",
	107: "agent_data", 108: "agent_token", 109: "migrate_end"}

var cursorServerNames = map[MsgType]string{101: "init", 102: "reset", 103: "set", 104: "move", 105: "hide",
	106: "trail", 107: "inval_one", 108: "inval_all"}

// MessageName is the name of data message type t on a channel of type ch
// going in direction dir ("draw_copy", "key_down"), or "" when this
// package does not know it.
func MessageName(ch ChannelType, dir Direction, t MsgType) string {
	if t < 101 {
		if dir == ServerToClient {
			return commonServerNames[t]
		}
		return commonClientNames[t]
	}
	var server, client map[MsgType]string
	switch ch {
	case ChannelMain:
		server, client = mainServerNames, mainClientNames
	case ChannelDisplay:
		server, client = displayServerNames, displayClientNames
	case ChannelInputs:
		server, client = inputsServerNames, inputsClientNames
	case ChannelCursor:
		server = cursorServerNames
	}
	if dir == ServerToClient {
		return server[t]
	}
	return client[t]
}

// isDraw reports whether display message type t starts with a
// SpiceMsgDisplayBase (surface, box, clip): the draw operations and
// copy_bits.
func isDraw(t MsgType) bool {
	return t == MsgDisplayCopyBits || t >= MsgDisplayDrawFill && t <= MsgDisplayDrawAlphaBlend || t == MsgDisplayDrawComposite
}

// Direction is which way bytes travel on a connection.
type Direction int

const (
	// ClientToServer is from the SPICE client to spice-server.
	ClientToServer Direction = iota
	// ServerToClient is from spice-server to the client.
	ServerToClient
)

// String is "c2s" or "s2c", as traces write it.
func (d Direction) String() string {
	switch d {
	case ClientToServer:
		return "c2s"
	case ServerToClient:
		return "s2c"
	}
	return fmt.Sprintf("Direction(%d)", int(d))
}
