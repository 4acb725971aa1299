package spicelike

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"
)

// The exchange on the wire. Opening: on every channel the client writes opener(i), i the channel's
// index; the server checks it (so channels out of order are an error) and
// answers with the same byte.
//
// Running: bulk bytes from server to client on the saturating channel,
// EchoSize-byte messages (header below) echoed on the interactive one,
// nothing on quiet ones.
//
// Closing: the client writes endByte on each quiet and saturating channel
// and an end message on the interactive one; the server answers endByte
// on quiet channels, echoes the end message, stops its bulk writer, and
// returns once every channel has closed this way. The client waits for no
// answer on the saturating channel nor on a timed-out interactive one.

const endByte = 0xE5

func opener(i int) byte { return byte(0x80 | i) }

// Interactive message header (big-endian):
//
//	[0]     kind: kindRequest or kindEnd
//	[1]     version (1)
//	[2:4]   message size in bytes (EchoSize)
//	[4:8]   magic "echo"
//	[8:16]  sequence number, from 1
//	[16:]   pattern derived from the sequence number
const (
	kindRequest = 'Q'
	kindEnd     = 'E'
	wireVersion = 1
)

var magic = [4]byte{'e', 'c', 'h', 'o'}

// fillMessage writes message seq of the given kind into b. It allocates
// nothing.
func fillMessage(b []byte, kind byte, seq uint64) {
	b[0] = kind
	b[1] = wireVersion
	binary.BigEndian.PutUint16(b[2:4], uint16(len(b)))
	copy(b[4:8], magic[:])
	binary.BigEndian.PutUint64(b[8:16], seq)
	x := byte(seq*7 + 0x5a)
	for i := headerSize; i < len(b); i++ {
		b[i] = x
		x = x*31 + 17
	}
}

// checkHeader is what the server checks before echoing: that the message is
// framed the way it expects. It returns the kind.
func checkHeader(h []byte, size int) (byte, error) {
	if h[0] != kindRequest && h[0] != kindEnd || h[1] != wireVersion || [4]byte(h[4:8]) != magic {
		return 0, fmt.Errorf("interactive message header % x is not one this server writes: is the peer a spicelike client of the same version?", h[:8])
	}
	if n := int(binary.BigEndian.Uint16(h[2:4])); n != size {
		return 0, fmt.Errorf("client sends %d-byte interactive messages but this server is configured for EchoSize %d: give both ends the same Config", n, size)
	}
	return h[0], nil
}

// describeMismatch explains how a received echo differs from the request.
// It runs once, on the error path, so it may allocate.
func describeMismatch(want, got []byte) error {
	ws, gs := binary.BigEndian.Uint64(want[8:16]), binary.BigEndian.Uint64(got[8:16])
	if ws != gs && got[0] == want[0] && [4]byte(got[4:8]) == magic {
		return fmt.Errorf("echo out of order: sent request %d, got back request %d", ws, gs)
	}
	for i := range want {
		if want[i] != got[i] {
			return fmt.Errorf("corrupted echo of request %d: byte %d is %#02x, sent %#02x", ws, i, got[i], want[i])
		}
	}
	return fmt.Errorf("echo of request %d differs from the request", ws)
}

// Interrupting blocked I/O. Channels that implement net.Conn-style deadlines
// (net.Conn, net.Pipe, quic-go streams) are interrupted by a deadline in the
// past; others that implement io.Closer are closed. A channel that has
// neither cannot be interrupted: the goroutine using it stays blocked until
// the caller closes it, and the run reports the channel as stuck.

type readDeadliner interface{ SetReadDeadline(time.Time) error }
type writeDeadliner interface{ SetWriteDeadline(time.Time) error }

var past = time.Unix(1, 0)

func interruptRead(ch io.ReadWriter) bool {
	if d, ok := ch.(readDeadliner); ok && d.SetReadDeadline(past) == nil {
		return true
	}
	if c, ok := ch.(io.Closer); ok {
		_ = c.Close()
		return true
	}
	return false
}

func interruptWrite(ch io.ReadWriter) bool {
	if d, ok := ch.(writeDeadliner); ok && d.SetWriteDeadline(past) == nil {
		return true
	}
	if c, ok := ch.(io.Closer); ok {
		_ = c.Close()
		return true
	}
	return false
}

func interruptBoth(ch io.ReadWriter) {
	rd, rok := ch.(readDeadliner)
	wd, wok := ch.(writeDeadliner)
	if rok && wok && rd.SetReadDeadline(past) == nil && wd.SetWriteDeadline(past) == nil {
		return
	}
	if c, ok := ch.(io.Closer); ok {
		_ = c.Close()
	}
}

// guard interrupts ch (read side, write side or both) if stop is not called
// within d. It is for the rare one-off steps (opening, closing), not the
// per-round-trip path.
func guard(ch io.ReadWriter, d time.Duration, interrupt func(io.ReadWriter) bool) (stop func() bool) {
	t := time.AfterFunc(d, func() { interrupt(ch) })
	return t.Stop
}

func interruptBothBool(ch io.ReadWriter) bool { interruptBoth(ch); return true }
