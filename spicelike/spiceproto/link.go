package spiceproto

import (
	"encoding/binary"
	"fmt"
)

var le = binary.LittleEndian

// LinkHeader precedes the link message and the link reply.
type LinkHeader struct {
	// Magic is "REDQ" read as a little-endian uint32.
	Magic uint32
	// Major and Minor are the protocol version, 2.2 from current peers.
	Major, Minor uint32
	// Size is the length of the link message or reply that follows.
	Size uint32
}

// maxLinkBody bounds a link message or reply: they hold a few dozen bytes
// of fixed fields and a handful of capability words.
const maxLinkBody = 64 << 10

// ParseLinkHeader reads a link header from the first LinkHeaderSize bytes
// of b and checks it is one a SPICE 2.x peer sends.
func ParseLinkHeader(b []byte) (LinkHeader, error) {
	if len(b) < LinkHeaderSize {
		return LinkHeader{}, fmt.Errorf("spiceproto: link header needs %d bytes, have %d", LinkHeaderSize, len(b))
	}
	h := LinkHeader{Magic: le.Uint32(b), Major: le.Uint32(b[4:]), Minor: le.Uint32(b[8:]), Size: le.Uint32(b[12:])}
	switch {
	case h.Magic != magic:
		return h, fmt.Errorf("spiceproto: link header starts % x, not \"REDQ\": the connection does not carry SPICE (a TLS port, or another protocol?)", b[:4])
	case h.Major != versionMajor:
		return h, fmt.Errorf("spiceproto: link header announces protocol %d.%d; only major version %d is understood", h.Major, h.Minor, versionMajor)
	case h.Size > maxLinkBody:
		return h, fmt.Errorf("spiceproto: link header announces a %d-byte link message; more than %d is not a SPICE link stage", h.Size, maxLinkBody)
	}
	return h, nil
}

func (h LinkHeader) marshal(b []byte) []byte {
	b = le.AppendUint32(b, h.Magic)
	b = le.AppendUint32(b, h.Major)
	b = le.AppendUint32(b, h.Minor)
	return le.AppendUint32(b, h.Size)
}

// LinkMess is the client's link message: which channel this connection is
// for, and the client's capabilities.
type LinkMess struct {
	ConnectionID uint32
	ChannelType  ChannelType
	ChannelID    uint8
	CommonCaps   []uint32
	ChannelCaps  []uint32
}

// Marshal returns the link header and the link message as the client
// sends them.
func (m LinkMess) Marshal() []byte {
	size := linkMessSize + 4*(len(m.CommonCaps)+len(m.ChannelCaps))
	b := LinkHeader{Magic: magic, Major: versionMajor, Minor: versionMinor, Size: uint32(size)}.marshal(nil)
	b = le.AppendUint32(b, m.ConnectionID)
	b = append(b, byte(m.ChannelType), m.ChannelID)
	b = le.AppendUint32(b, uint32(len(m.CommonCaps)))
	b = le.AppendUint32(b, uint32(len(m.ChannelCaps)))
	b = le.AppendUint32(b, linkMessSize) // the caps follow the fixed part
	return appendCaps(b, m.CommonCaps, m.ChannelCaps)
}

// ParseLinkMess reads a link message body (what follows the link header).
func ParseLinkMess(b []byte) (LinkMess, error) {
	if len(b) < linkMessSize {
		return LinkMess{}, fmt.Errorf("spiceproto: link message of %d bytes; the fixed part alone is %d", len(b), linkMessSize)
	}
	m := LinkMess{ConnectionID: le.Uint32(b), ChannelType: ChannelType(b[4]), ChannelID: b[5]}
	var err error
	m.CommonCaps, m.ChannelCaps, err = parseCaps(b, le.Uint32(b[6:]), le.Uint32(b[10:]), le.Uint32(b[14:]), "link message")
	return m, err
}

// LinkReply is the server's answer to a link message: an error code, the
// public key the client encrypts its ticket with, and the server's
// capabilities.
type LinkReply struct {
	Error LinkErr
	// PubKey is the server's 1024-bit RSA public key, DER-encoded.
	PubKey      [pubKeyBytes]byte
	CommonCaps  []uint32
	ChannelCaps []uint32
}

// Marshal returns the link header and the reply as the server sends them.
func (r LinkReply) Marshal() []byte {
	size := linkReplySize + 4*(len(r.CommonCaps)+len(r.ChannelCaps))
	b := LinkHeader{Magic: magic, Major: versionMajor, Minor: versionMinor, Size: uint32(size)}.marshal(nil)
	b = le.AppendUint32(b, uint32(r.Error))
	b = append(b, r.PubKey[:]...)
	b = le.AppendUint32(b, uint32(len(r.CommonCaps)))
	b = le.AppendUint32(b, uint32(len(r.ChannelCaps)))
	b = le.AppendUint32(b, linkReplySize)
	return appendCaps(b, r.CommonCaps, r.ChannelCaps)
}

// parseLinkReply reads a link reply body.
func parseLinkReply(b []byte) (LinkReply, error) {
	if len(b) < linkReplySize {
		return LinkReply{}, fmt.Errorf("spiceproto: link reply of %d bytes; the fixed part alone is %d", len(b), linkReplySize)
	}
	r := LinkReply{Error: LinkErr(le.Uint32(b))}
	copy(r.PubKey[:], b[4:])
	o := 4 + pubKeyBytes
	var err error
	r.CommonCaps, r.ChannelCaps, err = parseCaps(b, le.Uint32(b[o:]), le.Uint32(b[o+4:]), le.Uint32(b[o+8:]), "link reply")
	return r, err
}

func appendCaps(b []byte, common, channel []uint32) []byte {
	for _, c := range common {
		b = le.AppendUint32(b, c)
	}
	for _, c := range channel {
		b = le.AppendUint32(b, c)
	}
	return b
}

// parseCaps reads nCommon and nChannel capability words at offset off of
// body (offsets count from the start of the body, as SPICE's do).
func parseCaps(body []byte, nCommon, nChannel, off uint32, what string) (common, channel []uint32, err error) {
	n := uint64(nCommon) + uint64(nChannel)
	if end := uint64(off) + 4*n; end > uint64(len(body)) {
		return nil, nil, fmt.Errorf("spiceproto: %s claims %d capability words at offset %d, beyond its %d bytes", what, n, off, len(body))
	}
	words := func(from, k uint32) []uint32 {
		out := make([]uint32, k)
		for i := range out {
			out[i] = le.Uint32(body[from+4*uint32(i):])
		}
		return out
	}
	return words(off, nCommon), words(off+4*nCommon, nChannel), nil
}

// AppendData appends one data message to b: its header (the mini header
// when mini is set, else the full header with serial and no sub-list) and
// body.
func AppendData(b []byte, mini bool, serial uint64, typ MsgType, body []byte) []byte {
	if !mini {
		b = le.AppendUint64(b, serial)
	}
	b = le.AppendUint16(b, uint16(typ))
	b = le.AppendUint32(b, uint32(len(body)))
	if !mini {
		b = le.AppendUint32(b, 0)
	}
	return append(b, body...)
}
