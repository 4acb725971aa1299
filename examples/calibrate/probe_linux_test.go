package main

import (
	"bytes"
	"encoding/binary"
	"strings"
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

// TestIperfTable: targets are 95% of the rate up to 1 Gbit/s and 90%
// above; a rate the bare pair could not carry in the same run is "n/a",
// not a miss; the unlimited link is read against the bare pair.
func TestIperfTable(t *testing.T) {
	fs := []Iperf{
		{Label: "bare veth", Profile: "2:100000", Backend: "none", Mbit: 400},
		{Label: "unlimited", Profile: "2:100000", Backend: "emulator", Mbit: 380},
		{Label: "5:10", Profile: "5:10", Backend: "emulator", RateMbit: 10, Mbit: 9.5, GoodputPct: 95, WirePct: 99.4},
		{Label: "5:100", Profile: "5:100", Backend: "emulator", RateMbit: 100, Mbit: 90, GoodputPct: 90, WirePct: 94.1},
		{Label: "5:2000", Profile: "5:2000", Backend: "emulator", RateMbit: 2000, Mbit: 380, GoodputPct: 19, WirePct: 19.9},
	}
	var buf bytes.Buffer
	printIperf(&buf, fs)
	out := buf.String()
	rows := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			rows[f[0]] = line
		}
	}
	for label, want := range map[string]string{"unlimited": "95.0% of bare", "5:10": "ok", "5:100": "MISS", "5:2000": "n/a"} {
		if !strings.Contains(rows[label], want) {
			t.Errorf("row %s does not say %q:\n%s", label, want, out)
		}
	}
	if !strings.Contains(out, "cannot be judged") {
		t.Errorf("no note says why a target was not judged:\n%s", out)
	}
	if iperfTarget(1000) != 95 || iperfTarget(2000) != 90 {
		t.Errorf("targets: %v at 1 Gbit/s, %v at 2 Gbit/s; want 95 and 90", iperfTarget(1000), iperfTarget(2000))
	}
}
