package inproc

import (
	"encoding/binary"
	"net/netip"
	"testing"
)

// receiverTakes is what a Linux host does with frame, an Ethernet frame
// carrying an IPv4 UDP datagram, arriving on a device whose address is
// mac, written from the rules the kernel applies (eth_type_trans, ip_rcv,
// udp_rcv): the datagram reaches a socket only if the frame is for this
// device (its address, or any group address), says IPv4, has a sound IPv4
// header (version, length, header checksum) for this host, and a UDP
// checksum that is zero (none, in IPv4) or verifies over the pseudo-header
// and the datagram. It returns the payload the socket would read.
func receiverTakes(frame []byte, mac [6]byte, me netip.Addr) ([]byte, bool) {
	if [6]byte(frame[0:6]) != mac && frame[0]&1 == 0 {
		return nil, false // another host's unicast address: PACKET_OTHERHOST
	}
	if binary.BigEndian.Uint16(frame[12:14]) != 0x0800 {
		return nil, false
	}
	ip := frame[14:34]
	if ip[0] != 0x45 || int(binary.BigEndian.Uint16(ip[2:4])) != len(frame)-14 || ip[9] != 17 ||
		netip.AddrFrom4([4]byte(ip[16:20])) != me || onesSum(ip) != 0xffff {
		return nil, false
	}
	udp := frame[34:]
	if int(binary.BigEndian.Uint16(udp[4:6])) != len(udp) {
		return nil, false
	}
	if binary.BigEndian.Uint16(udp[6:8]) != 0 {
		pseudo := append(append([]byte{}, ip[12:20]...), 0, 17, udp[4], udp[5])
		if onesSum(append(pseudo, udp...)) != 0xffff {
			return nil, false
		}
	}
	return udp[8:], true
}

// onesSum is the ones' complement sum of b (16-bit words, big-endian).
func onesSum(b []byte) uint16 {
	var s uint32
	for len(b) >= 2 {
		s += uint32(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		s += uint32(b[0]) << 8
	}
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return uint16(s)
}

// fullFrame is the frame the emulator carries for a datagram: the
// header with both checksums filled in and the payload.
func fullFrame(src, dst netip.AddrPort, mac [6]byte, p []byte) []byte {
	f := append(header(src, dst, len(p)), p...)
	copy(f[0:6], mac[:])
	copy(f[6:12], []byte{2, 0, 0, 0, 0, 1})
	binary.BigEndian.PutUint16(f[24:26], ^onesSum(f[14:34]))
	binary.BigEndian.PutUint16(f[40:42], udpSum(src, dst, p))
	return f
}

// TestCorruptionAsTheReceiver: for every bit of the frame of some
// datagrams (one whose UDP checksum is a single bit, so that flipping it
// zeroes the checksum), the link delivers exactly when a receiver applying
// the kernel's checks to the flipped frame would take the datagram, and it
// is then unchanged.
func TestCorruptionAsTheReceiver(t *testing.T) {
	src := netip.MustParseAddrPort("198.18.0.1:4433")
	dst := netip.MustParseAddrPort("198.18.0.2:32768")
	mac := [6]byte{2, 0, 0, 0, 0, 2}
	payloads := [][]byte{[]byte("hello"), make([]byte, 64), {0xff, 0x00, 0x12}}
	// A payload whose checksum has a single bit set.
	for v := 0; v < 1<<16; v++ {
		p := []byte{byte(v >> 8), byte(v)}
		if c := udpSum(src, dst, p); c&(c-1) == 0 {
			payloads = append(payloads, p)
			break
		}
	}
	if len(payloads) != 4 {
		t.Fatal("no two-byte payload gives a one-bit checksum")
	}
	passed := map[int]int{}
	for _, p := range payloads {
		frame := fullFrame(src, dst, mac, p)
		if got, ok := receiverTakes(frame, mac, dst.Addr()); !ok || string(got) != string(p) {
			t.Fatalf("the receiver model refuses an intact frame")
		}
		for bit := range uint32(len(frame) * 8) {
			flipped := append([]byte(nil), frame...)
			flipped[bit/8] ^= 1 << (bit % 8)
			got, takes := receiverTakes(flipped, mac, dst.Addr())
			if takes && string(got) != string(p) {
				t.Fatalf("bit %d: the receiver model takes a changed payload", bit)
			}
			if passes := corruptionPasses(src, dst, p, bit); passes != takes {
				t.Errorf("%d-byte payload, bit %d (byte %d): the link delivers %v, the receiver takes %v", len(p), bit, bit/8, passes, takes)
			}
			if takes {
				passed[int(bit/8)]++
			}
		}
	}
	// The source address, the group bit, and one checksum.
	if len(passed) != 8 || passed[0] != 4 || passed[6] != 32 {
		t.Errorf("bytes whose flips pass: %v; want the source address (6-11), byte 0's group bit and a checksum byte", passed)
	}
}
