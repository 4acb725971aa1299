package transport

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The wire: the client writes muxHello once, then both ends write frames,
// a 4-byte header and its payload:
//
//	[0]   kind: muxData (payload is channel data), muxFin (no payload: the
//	      sender writes nothing more on the channel), muxCredit (payload
//	      is a big-endian uint32: the receiver has read that many more
//	      bytes of the channel, so the sender may send them) or, in a
//	      carrier, muxOpen (no payload: the client opens the channel,
//	      before any other frame of it) and muxRefuse (the listener's
//	      only frame to a carrier it will not serve, on channel 0: the
//	      payload says why, in text)
//	[1]   channel index
//	[2:4] payload length, big-endian: 1..muxMaxPayload for data and
//	      refusals, 0 for fin and open, 4 for credit
const (
	muxHeaderLen = 4
	muxData      = 'D'
	muxFin       = 'F'
	muxCredit    = 'C'
	muxOpen      = 'O'
	muxRefuse    = 'R'
	muxVersion   = 2
)

// The hello's mode: a session's channels all exist from the start; a
// carrier's are opened one at a time with muxOpen.
const (
	muxModeSession = 0
	muxModeCarrier = 1
)

// muxHello is the client's first bytes: magic, version, channel count,
// mode and a zero byte.
var muxMagic = [4]byte{'Q', 'B', 'M', 'X'}

const muxHelloLen = 8

type muxFrame struct {
	kind    byte
	channel int
	length  int
}

func putMuxHeader(b []byte, f muxFrame) {
	b[0], b[1] = f.kind, byte(f.channel)
	binary.BigEndian.PutUint16(b[2:4], uint16(f.length))
}

// parseMuxHeader decodes and checks a frame header of a session of
// channels channels.
func parseMuxHeader(h []byte, channels int) (muxFrame, error) {
	f := muxFrame{kind: h[0], channel: int(h[1]), length: int(binary.BigEndian.Uint16(h[2:4]))}
	switch {
	case f.kind != muxData && f.kind != muxFin && f.kind != muxCredit && f.kind != muxOpen && f.kind != muxRefuse:
		return f, fmt.Errorf("frame header % x has kind %#02x, not data, fin, credit, open or refuse: is the peer a tcp-mux end of this version?", h[:muxHeaderLen], f.kind)
	case f.channel >= channels:
		return f, fmt.Errorf("frame for channel %d of a %d-channel session", f.channel, channels)
	case (f.kind == muxFin || f.kind == muxOpen) && f.length != 0:
		return f, fmt.Errorf("%s frame for channel %d carries %d bytes; it carries none", muxFrameName(f.kind), f.channel, f.length)
	case f.kind == muxCredit && f.length != 4:
		return f, fmt.Errorf("credit frame for channel %d carries %d bytes; it carries 4", f.channel, f.length)
	case (f.kind == muxData || f.kind == muxRefuse) && (f.length == 0 || f.length > muxMaxPayload):
		return f, fmt.Errorf("%s frame for channel %d of %d bytes; frames carry 1 to %d", muxFrameName(f.kind), f.channel, f.length, muxMaxPayload)
	}
	return f, nil
}

// readMuxFrame reads one frame from r into buf (at least muxMaxPayload
// bytes) and returns it with its payload. io.EOF means r ended cleanly
// between frames.
func readMuxFrame(r io.Reader, channels int, buf []byte) (muxFrame, []byte, error) {
	var h [muxHeaderLen]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			err = fmt.Errorf("the connection ended inside a frame header: %w", err)
		}
		return muxFrame{}, nil, err
	}
	f, err := parseMuxHeader(h[:], channels)
	if err != nil {
		return f, nil, err
	}
	p := buf[:f.length]
	if _, err := io.ReadFull(r, p); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return f, nil, fmt.Errorf("reading the %d bytes of a frame for channel %d: %w", f.length, f.channel, err)
	}
	return f, p, nil
}

func muxFrameName(k byte) string {
	switch k {
	case muxData:
		return "data"
	case muxFin:
		return "fin"
	case muxCredit:
		return "credit"
	case muxOpen:
		return "open"
	case muxRefuse:
		return "refuse"
	}
	return fmt.Sprintf("%#02x", k)
}

func muxHello(channels int, mode byte) []byte {
	b := make([]byte, muxHelloLen)
	copy(b, muxMagic[:])
	b[4], b[5], b[6] = muxVersion, byte(channels), mode
	return b
}

func checkMuxHello(b []byte, channels int, mode byte) error {
	switch {
	case [4]byte(b[:4]) != muxMagic:
		return fmt.Errorf("the client's first bytes % x are not a tcp-mux hello (%q): is the client dialling another arm?", b, muxMagic[:])
	case b[4] != muxVersion:
		return fmt.Errorf("the client speaks tcp-mux version %d, this server %d: run the same build at both ends", b[4], muxVersion)
	case b[6] != mode && mode == muxModeSession:
		return errors.New("the client opens a tcp-mux carrier, and this server serves sessions: listen with transport.ListenMuxCarrier")
	case b[6] != mode:
		return errors.New("the client opens a tcp-mux session, and this server serves carriers: dial with transport.DialMuxCarrier")
	case int(b[5]) != channels:
		return fmt.Errorf("the client has %d channels and this server %d: give both ends the same Options.Channels", b[5], channels)
	}
	return nil
}
