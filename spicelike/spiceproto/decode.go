package spiceproto

import "fmt"

// Offsets into the bodies this package decodes (spice-common's spice.proto,
// as marshalled: packed, little-endian).
const (
	// SpiceMsgDisplayBase: surface_id u32, box (top, left, bottom, right
	// i32), clip type u8, ...
	baseSurface = 0
	baseBox     = 4
	baseLen     = 20
	// stream_create: surface_id u32, id u32, flags u8, codec_type u8,
	// stamp u64, stream_width, stream_height, src_width, src_height u32,
	// dest rect, clip.
	createSurface = 0
	createID      = 4
	createDest    = 34
	createLen     = 50
	// stream_data and stream_data_sized start with id u32,
	// multi_media_time u32; stream_data_sized then has width, height u32
	// and dest rect.
	streamID       = 0
	sizedDest      = 16
	sizedLen       = 32
	streamDataLen  = 4
	destroyLen     = 4
	surfaceFlags   = 16
	surfaceLen     = 20
	keyCodeLen     = 4
	scancodeRelBit = 0x80
)

func rectAt(b []byte, o int) Rect {
	return Rect{
		Top:    int32(le.Uint32(b[o:])),
		Left:   int32(le.Uint32(b[o+4:])),
		Bottom: int32(le.Uint32(b[o+8:])),
		Right:  int32(le.Uint32(b[o+12:])),
	}
}

// decodeDisplay reads what a display message draws from the first bytes
// of its body, and follows the surfaces and streams it needs for that. A
// body too short for its type draws nothing. A stream_create that would
// make more than maxStreams streams live is an error.
func (c *Conn) decodeDisplay(t MsgType, b []byte) (*Draw, error) {
	draw := func(surface uint32, box Rect, stream bool) *Draw {
		return &Draw{Surface: surface, Primary: surface == c.primary, Box: box, Stream: stream}
	}
	switch {
	case isDraw(t):
		if len(b) >= baseLen {
			return draw(le.Uint32(b[baseSurface:]), rectAt(b, baseBox), false), nil
		}
	case t == MsgDisplayStreamCreate:
		if len(b) >= createLen {
			id := le.Uint32(b[createID:])
			if _, ok := c.streams[id]; !ok && len(c.streams) >= maxStreams {
				return nil, fmt.Errorf("stream_create of video stream %d with %d streams live; more than %d is not a SPICE server's stream table (spice-server keeps 50)", id, len(c.streams), maxStreams)
			}
			c.streams[id] = streamInfo{surface: le.Uint32(b[createSurface:]), dest: rectAt(b, createDest)}
		}
	case t == MsgDisplayStreamData:
		if len(b) >= streamDataLen {
			if s, ok := c.streams[le.Uint32(b[streamID:])]; ok {
				return draw(s.surface, s.dest, true), nil
			}
		}
	case t == MsgDisplayStreamDataSized:
		if len(b) >= sizedLen {
			if s, ok := c.streams[le.Uint32(b[streamID:])]; ok {
				return draw(s.surface, rectAt(b, sizedDest), true), nil
			}
		}
	case t == MsgDisplayStreamDestroy:
		if len(b) >= destroyLen {
			delete(c.streams, le.Uint32(b[streamID:]))
		}
	case t == MsgDisplayStreamDestroyAll:
		clear(c.streams)
	case t == MsgDisplaySurfaceCreate:
		if len(b) >= surfaceLen && le.Uint32(b[surfaceFlags:])&surfaceFlagPrimary != 0 {
			c.primary = le.Uint32(b[baseSurface:])
		}
	}
	return nil, nil
}

// decodeKey reads a key message of the inputs channel.
func decodeKey(t MsgType, b []byte) *Key {
	switch t {
	case MsgcInputsKeyDown, MsgcInputsKeyUp:
		if len(b) >= keyCodeLen {
			return &Key{Code: le.Uint32(b), Down: t == MsgcInputsKeyDown}
		}
	case MsgcInputsKeyScancode:
		if len(b) == 0 {
			return nil
		}
		code := uint32(b[0])
		if b[0] == 0xe0 && len(b) > 1 {
			code = 0xe000 | uint32(b[1])
		}
		return &Key{Code: code, Down: code&scancodeRelBit == 0}
	}
	return nil
}
