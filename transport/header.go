package transport

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"io"
)

// Every channel starts with a fixed-size header written by the client before
// any application data, so the server knows which session and which channel
// a connection or stream belongs to whatever order they arrive in:
//
//	offset size field
//	0      4    magic "QBC1"
//	4      8    session id (random, chosen by the client)
//	12     1    channel index, 0..count-1
//	13     1    channel count
//
// The server reads exactly these bytes and nothing more, so application data
// that follows is untouched.
const headerLen = 14

var headerMagic = [4]byte{'Q', 'B', 'C', '1'}

type sessionID uint64

type channelHeader struct {
	session sessionID
	index   int
	count   int
}

func newSessionID() (sessionID, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return 0, fmt.Errorf("transport: session id: %w", err)
	}
	return sessionID(binary.BigEndian.Uint64(b[:])), nil
}

func (h channelHeader) marshal() []byte {
	b := make([]byte, headerLen)
	copy(b, headerMagic[:])
	binary.BigEndian.PutUint64(b[4:], uint64(h.session))
	b[12] = byte(h.index)
	b[13] = byte(h.count)
	return b
}

func readHeader(r io.Reader) (channelHeader, error) {
	var b [headerLen]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return channelHeader{}, fmt.Errorf("reading channel header: %w", err)
	}
	if [4]byte(b[:4]) != headerMagic {
		return channelHeader{}, fmt.Errorf("channel header has magic %q, want %q: "+
			"the peer is not a quicbench transport client of this version", b[:4], headerMagic[:])
	}
	h := channelHeader{
		session: sessionID(binary.BigEndian.Uint64(b[4:12])),
		index:   int(b[12]),
		count:   int(b[13]),
	}
	if h.count < 1 || h.index >= h.count {
		return channelHeader{}, fmt.Errorf("channel header says channel %d of %d: invalid", h.index, h.count)
	}
	return h, nil
}
