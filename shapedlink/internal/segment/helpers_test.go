package segment

import (
	"encoding/binary"
	"fmt"
	"net"
)

// superPacket builds a super-packet of a TCP (ipv6: over IPv6) or, with
// udp, a UDP_SEGMENT flow, carrying payload cut at mss, with the
// checksum left for the kernel (the pseudo-header's sum).
func superPacket(ipv6, udp bool, payload []byte, mss int) (vnet, frame []byte) {
	l3 := 14
	ipLen, l4Len := 20, 20
	if ipv6 {
		ipLen = 40
	}
	if udp {
		l4Len = 8
	}
	hdr := l3 + ipLen + l4Len
	frame = make([]byte, hdr+len(payload))
	copy(frame[0:], []byte{0x02, 0, 0, 0, 0, 0xbb, 0x02, 0, 0, 0, 0, 0xaa})
	ip := frame[l3:]
	proto := byte(6)
	if udp {
		proto = 17
	}
	if ipv6 {
		binary.BigEndian.PutUint16(frame[12:], 0x86dd)
		ip[0] = 0x60
		binary.BigEndian.PutUint16(ip[4:], uint16(l4Len+len(payload)))
		ip[6], ip[7] = proto, 64
		copy(ip[8:], net.ParseIP("2001:2::1").To16())
		copy(ip[24:], net.ParseIP("2001:2::2").To16())
	} else {
		binary.BigEndian.PutUint16(frame[12:], 0x0800)
		ip[0], ip[8], ip[9] = 0x45, 64, proto
		binary.BigEndian.PutUint16(ip[2:], uint16(ipLen+l4Len+len(payload)))
		binary.BigEndian.PutUint16(ip[4:], 0xfff0) // an identifier that wraps
		binary.BigEndian.PutUint16(ip[6:], 0x4000) // DF
		copy(ip[12:], []byte{198, 18, 0, 1, 198, 18, 0, 2})
		binary.BigEndian.PutUint16(ip[10:], ^fold(sum16(ip[:20])))
	}
	th := frame[l3+ipLen:]
	binary.BigEndian.PutUint16(th[0:], 4433)
	binary.BigEndian.PutUint16(th[2:], 5555)
	csumAt, gso := 16, byte(gsoTCPv4)
	if udp {
		binary.BigEndian.PutUint16(th[4:], uint16(8+len(payload)))
		csumAt, gso = 6, gsoUDPL4
	} else {
		binary.BigEndian.PutUint32(th[4:], 0xfffff000) // a sequence number that wraps
		binary.BigEndian.PutUint32(th[8:], 77)
		th[12] = 5 << 4
		th[13] = 0x80 | 0x10 | 0x08 | 0x01 // CWR ACK PSH FIN
		binary.BigEndian.PutUint16(th[14:], 512)
		if ipv6 {
			gso = gsoTCPv6
		}
	}
	copy(frame[hdr:], payload)
	f := Frame{frame: frame, l3: l3, l4: l3 + ipLen, ipv6: ipv6, tcp: !udp}
	binary.BigEndian.PutUint16(th[csumAt:], fold(f.pseudo(frame, l4Len+len(payload))))
	vnet = make([]byte, VnetLen)
	vnet[0], vnet[1] = flagNeedsCsum, gso
	binary.NativeEndian.PutUint16(vnet[vnetHdrLenAt:], uint16(hdr))
	binary.NativeEndian.PutUint16(vnet[vnetGSOSizeAt:], uint16(mss))
	binary.NativeEndian.PutUint16(vnet[vnetCsumStartAt:], uint16(l3+ipLen))
	binary.NativeEndian.PutUint16(vnet[vnetCsumOffsetAt:], uint16(csumAt))
	return vnet, frame
}

// complete finishes a run's partial checksum as the kernel does for a
// device that cannot: over the transport header and payload.
func complete(vnet, frame []byte) {
	start := int(binary.NativeEndian.Uint16(vnet[vnetCsumStartAt:]))
	at := start + int(binary.NativeEndian.Uint16(vnet[vnetCsumOffsetAt:]))
	c := ^fold(sum16(frame[start:]))
	if c == 0 && binary.NativeEndian.Uint16(vnet[vnetCsumOffsetAt:]) == 6 {
		c = 0xffff
	}
	binary.BigEndian.PutUint16(frame[at:], c)
}

// diff shows the first bytes where a and b differ.
func diff(a, b []byte) string {
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			lo := max(0, i-4)
			return fmt.Sprintf("%d and %d bytes, first difference at %d: % x vs % x", len(a), len(b), i, a[lo:min(len(a), i+8)], b[lo:min(len(b), i+8)])
		}
	}
	return fmt.Sprintf("lengths %d and %d", len(a), len(b))
}
