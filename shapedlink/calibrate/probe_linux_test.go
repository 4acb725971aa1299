package calibrate

import (
	"encoding/binary"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestICMPChecksum: a message carrying its checksum sums to zero, and the
// RFC 1071 section 3 example gives its published sum.
func TestICMPChecksum(t *testing.T) {
	// RFC 1071: 00 01 f2 03 f4 f5 f6 f7 sums (one's complement) to ddf2,
	// so the checksum is its complement, 220d.
	if got := icmpChecksum([]byte{0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7}); got != 0x220d {
		t.Errorf("RFC 1071 example: %#04x, want 0x220d", got)
	}
	for _, n := range []int{8, 9, 64, 65} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(i*37 + 11)
		}
		b[2], b[3] = 0, 0
		binary.BigEndian.PutUint16(b[2:], icmpChecksum(b))
		if got := icmpChecksum(b); got != 0 {
			t.Errorf("%d bytes with their checksum sum to %#04x, want 0", n, got)
		}
	}
}

// reply builds what a raw ICMP socket returns for an echo reply: an IPv4
// header, the ICMP message, and an SO_TIMESTAMPNS control message.
func reply(typ byte, id, seq uint16, stamp int64) (b, oob []byte) {
	b = make([]byte, 20+8+pingPayload)
	b[0] = 0x45
	b[20] = typ
	binary.BigEndian.PutUint16(b[24:], id)
	binary.BigEndian.PutUint16(b[26:], seq)
	ts := unix.NsecToTimespec(stamp)
	data := unsafe.Slice((*byte)(unsafe.Pointer(&ts)), unsafe.Sizeof(ts))
	oob = make([]byte, unix.CmsgSpace(len(data)))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
	h.Level, h.Type = unix.SOL_SOCKET, unix.SO_TIMESTAMPNS
	h.SetLen(unix.CmsgLen(len(data)))
	copy(oob[unix.CmsgLen(0):], data)
	return b, oob
}

func TestParseReply(t *testing.T) {
	const stamp = 1_764_500_000_123_456_789
	b, oob := reply(0, 77, 5, stamp)
	if seq, got, ok := parseReply(b, oob, 77); !ok || seq != 5 || got != stamp {
		t.Errorf("echo reply: seq %d stamp %d ok %v, want 5 %d true", seq, got, ok, int64(stamp))
	}
	if _, _, ok := parseReply(b, oob, 78); ok {
		t.Error("a reply to another identifier was taken")
	}
	if b, oob := reply(8, 77, 5, stamp); true {
		if _, _, ok := parseReply(b, oob, 77); ok {
			t.Error("an echo request was taken for a reply")
		}
	}
	if _, _, ok := parseReply(b, nil, 77); ok {
		t.Error("a reply without a kernel timestamp was taken")
	}
	if _, _, ok := parseReply(b[:24], oob, 77); ok {
		t.Error("a truncated reply was taken")
	}
}
