package aqm

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"net/netip"
	"testing"
)

// Hand-built frames. Each builder returns a fresh slice.

func ether(etherType uint16, payload []byte) []byte {
	f := make([]byte, 14, 14+len(payload))
	copy(f[0:6], []byte{0x02, 0, 0, 0, 0, 2})
	copy(f[6:12], []byte{0x02, 0, 0, 0, 0, 1})
	binary.BigEndian.PutUint16(f[12:14], etherType)
	return append(f, payload...)
}

func vlan(id uint16, etherType uint16, payload []byte) []byte {
	inner := make([]byte, 4, 4+len(payload))
	binary.BigEndian.PutUint16(inner[0:2], id)
	binary.BigEndian.PutUint16(inner[2:4], etherType)
	return ether(etherVLAN, append(inner, payload...))
}

func ports(sport, dport uint16, rest int) []byte {
	b := make([]byte, 4+rest)
	binary.BigEndian.PutUint16(b[0:2], sport)
	binary.BigEndian.PutUint16(b[2:4], dport)
	for i := 4; i < len(b); i++ {
		b[i] = byte(i * 7)
	}
	return b
}

func udp(sport, dport uint16) []byte { return ports(sport, dport, 4+20) }  // header + 20 payload
func tcp(sport, dport uint16) []byte { return ports(sport, dport, 16+10) } // header + 10 payload

type v4 struct {
	tos      byte
	id       uint16
	frag     uint16 // flags and offset
	ttl      byte
	proto    byte
	src, dst string
	options  []byte // a multiple of 4 bytes
}

func (h v4) build(payload []byte) []byte {
	ihl := 20 + len(h.options)
	b := make([]byte, ihl, ihl+len(payload))
	b[0] = 0x40 | byte(ihl/4)
	b[1] = h.tos
	binary.BigEndian.PutUint16(b[2:4], uint16(ihl+len(payload)))
	binary.BigEndian.PutUint16(b[4:6], h.id)
	binary.BigEndian.PutUint16(b[6:8], h.frag)
	b[8] = h.ttl
	b[9] = h.proto
	s, d := netip.MustParseAddr(h.src).As4(), netip.MustParseAddr(h.dst).As4()
	copy(b[12:16], s[:])
	copy(b[16:20], d[:])
	copy(b[20:], h.options)
	binary.BigEndian.PutUint16(b[10:12], fullChecksum(b))
	return append(b, payload...)
}

// fullChecksum is the IPv4 header checksum computed from scratch over
// hdr with its checksum field taken as zero.
func fullChecksum(hdr []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(hdr); i += 2 {
		if i == 10 {
			continue
		}
		sum += uint32(hdr[i])<<8 | uint32(hdr[i+1])
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	return ^uint16(sum)
}

type v6 struct {
	tc       byte
	label    uint32
	next     byte
	src, dst string
}

func (h v6) build(payload []byte) []byte {
	b := make([]byte, 40, 40+len(payload))
	binary.BigEndian.PutUint32(b[0:4], 6<<28|uint32(h.tc)<<20|h.label&0xfffff)
	binary.BigEndian.PutUint16(b[4:6], uint16(len(payload)))
	b[6] = h.next
	b[7] = 64
	s, d := netip.MustParseAddr(h.src).As16(), netip.MustParseAddr(h.dst).As16()
	copy(b[8:24], s[:])
	copy(b[24:40], d[:])
	return append(b, payload...)
}

func classify(t *testing.T, frame []byte) (uint32, bool) {
	t.Helper()
	h, ect, ok := Classify(frame, 42)
	if !ok {
		t.Fatalf("Classify: not IP: % x", frame)
	}
	return h, ect
}

func TestClassifyIPv4(t *testing.T) {
	base := v4{ttl: 64, proto: protoUDP, src: "10.0.0.1", dst: "10.0.0.2"}
	udpFrame := func(h v4, sport, dport uint16) []byte { return ether(etherIPv4, h.build(udp(sport, dport))) }
	ref, ect := classify(t, udpFrame(base, 4433, 50000))
	if ect {
		t.Fatal("Not-ECT packet classified as ECN-capable")
	}
	for _, tos := range []byte{1, 2, 3, 0xb9, 0xba, 0xbb} {
		h := base
		h.tos = tos
		got, ect := classify(t, udpFrame(h, 4433, 50000))
		if !ect {
			t.Fatalf("TOS %#x: not ECN-capable", tos)
		}
		if got != ref {
			t.Fatal("the TOS byte changed the flow hash")
		}
	}
	same := base
	same.id, same.ttl = 999, 3
	if got, _ := classify(t, udpFrame(same, 4433, 50000)); got != ref {
		t.Fatal("the IP ID or TTL changed the flow hash")
	}
	other := func(name string, f []byte) {
		t.Helper()
		if got, _ := classify(t, f); got == ref {
			t.Fatalf("%s: same flow hash as the reference flow", name)
		}
	}
	other("source port", udpFrame(base, 4434, 50000))
	other("destination port", udpFrame(base, 4433, 50001))
	other("ports swapped", udpFrame(base, 50000, 4433))
	s := base
	s.src = "10.0.0.3"
	other("source address", udpFrame(s, 4433, 50000))
	s = base
	s.dst = "10.0.0.3"
	other("destination address", udpFrame(s, 4433, 50000))
	s = base
	s.proto = protoTCP
	other("TCP instead of UDP", ether(etherIPv4, s.build(tcp(4433, 50000))))
	if got, _, _ := Classify(udpFrame(base, 4433, 50000), 43); got == ref {
		t.Fatal("another seed gave the same hash")
	}

	// TCP, with and without IP options: the ports are found after IHL.
	tcpBase := base
	tcpBase.proto = protoTCP
	plain, _ := classify(t, ether(etherIPv4, tcpBase.build(tcp(80, 40000))))
	withOpts := tcpBase
	withOpts.options = []byte{0x94, 0x04, 0, 0, 0x01, 0x01, 0x01, 0x00} // router alert, NOPs, end
	if got, _ := classify(t, ether(etherIPv4, withOpts.build(tcp(80, 40000)))); got != plain {
		t.Fatal("IP options (IHL 7) changed the TCP flow hash: ports not read after the options")
	}
	if got, _ := classify(t, ether(etherIPv4, tcpBase.build(tcp(80, 40001)))); got == plain {
		t.Fatal("TCP port not in the hash")
	}

	// One VLAN tag is skipped.
	if got, _ := classify(t, vlan(100, etherIPv4, base.build(udp(4433, 50000)))); got != ref {
		t.Fatal("VLAN tag changed the flow hash")
	}

	// Fragments hash without ports, the first like the others.
	first, later := base, base
	first.frag = 0x2000 // MF
	later.frag = 185    // offset 1480
	a, _ := classify(t, ether(etherIPv4, first.build(udp(4433, 50000))))
	b, _ := classify(t, ether(etherIPv4, later.build(udp(9, 9))))
	if a != b {
		t.Fatal("the first and a later fragment of a datagram hash differently")
	}
	// Non-IP frames, and truncated ones.
	if _, _, ok := Classify(ether(0x0806, make([]byte, 28)), 42); ok {
		t.Fatal("ARP classified as IP")
	}
	full := udpFrame(base, 4433, 50000)
	for n := range len(full) {
		_, _, ok := Classify(full[:n], 42)
		if ok != (n >= 14+20) {
			t.Fatalf("frame cut to %d bytes: ok %v", n, ok)
		}
	}
	// Cut inside the UDP header: hashed without ports.
	noPorts, _, _ := Classify(full[:14+20+3], 42)
	frag, _ := classify(t, ether(etherIPv4, first.build(nil)))
	if noPorts != frag {
		t.Fatal("a frame cut inside the ports does not hash as addresses and protocol")
	}
}

func TestClassifyIPv6(t *testing.T) {
	base := v6{next: protoUDP, src: "fd00::1", dst: "fd00::2", label: 0x12345}
	ref, ect := classify(t, ether(etherIPv6, base.build(udp(4433, 50000))))
	if ect {
		t.Fatal("Not-ECT classified as ECN-capable")
	}
	for _, tc := range []byte{1, 2, 3, 0xb9} {
		h := base
		h.tc = tc
		got, ect := classify(t, ether(etherIPv6, h.build(udp(4433, 50000))))
		if !ect || got != ref {
			t.Fatalf("traffic class %#x: ect %v, hash changed %v", tc, ect, got != ref)
		}
	}
	l := base
	l.label = 7
	if got, _ := classify(t, ether(etherIPv6, l.build(udp(4433, 50000)))); got != ref {
		t.Fatal("the flow label changed the hash")
	}
	if got, _ := classify(t, ether(etherIPv6, base.build(udp(4433, 50001)))); got == ref {
		t.Fatal("UDP port not in the IPv6 hash")
	}
	s := base
	s.src = "fd00::3"
	if got, _ := classify(t, ether(etherIPv6, s.build(udp(4433, 50000)))); got == ref {
		t.Fatal("source address not in the IPv6 hash")
	}
	s = base
	s.dst = "fd00::3"
	if got, _ := classify(t, ether(etherIPv6, s.build(udp(4433, 50000)))); got == ref {
		t.Fatal("destination address not in the IPv6 hash")
	}
	// A hop-by-hop options header (8 bytes, next header UDP) is skipped.
	hbh := base
	hbh.next = protoHopByHop
	ext := append([]byte{protoUDP, 0, 1, 4, 0, 0, 0, 0}, udp(4433, 50000)...)
	if got, _ := classify(t, ether(etherIPv6, hbh.build(ext))); got != ref {
		t.Fatal("hop-by-hop header not skipped")
	}
	// VLAN.
	if got, _ := classify(t, vlan(7, etherIPv6, base.build(udp(4433, 50000)))); got != ref {
		t.Fatal("VLAN tag changed the IPv6 hash")
	}
	full := ether(etherIPv6, hbh.build(ext))
	for n := range len(full) {
		if _, _, ok := Classify(full[:n], 1); ok != (n >= 14+40) {
			t.Fatalf("frame cut to %d bytes: ok %v", n, ok)
		}
	}
}

func TestSetCEIPv4(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		h := v4{
			tos: byte(rng.Uint32()), id: uint16(rng.Uint32()), frag: uint16(rng.Uint32()) & 0x5fff,
			ttl: byte(rng.Uint32()), proto: protoUDP,
			src: netip.AddrFrom4([4]byte{byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32()), byte(rng.Uint32())}).String(),
			dst: netip.AddrFrom4([4]byte{10, 0, byte(rng.Uint32()), byte(rng.Uint32())}).String(),
		}
		if i%3 == 0 {
			h.options = []byte{1, 1, 1, 0}
		}
		var f []byte
		if i%5 == 0 {
			f = vlan(5, etherIPv4, h.build(udp(1, 2)))
		} else {
			f = ether(etherIPv4, h.build(udp(1, 2)))
		}
		off := 14
		if i%5 == 0 {
			off = 18
		}
		before := bytes.Clone(f)
		ok := SetCE(f)
		unchanged := bytes.Equal(f, before)
		ecn := h.tos & 3
		switch {
		case ecn == 0:
			if ok || !unchanged {
				t.Fatalf("Not-ECT: SetCE %v, frame changed %v", ok, !unchanged)
			}
			continue
		case !ok:
			t.Fatalf("ECN %d: SetCE false", ecn)
		case ecn == 3 && !unchanged:
			t.Fatal("SetCE changed a packet that already carried CE")
		}
		ip := f[off:]
		if ip[1] != h.tos|3 {
			t.Fatalf("TOS %#x after SetCE, want %#x", ip[1], h.tos|3)
		}
		ihl := int(ip[0]&0xf) * 4
		if got, want := binary.BigEndian.Uint16(ip[10:12]), fullChecksum(ip[:ihl]); got != want {
			t.Fatalf("TOS %#x: checksum %#04x after SetCE, a full recompute gives %#04x", h.tos, got, want)
		}
		// Nothing else changed.
		before[off+1] = ip[1]
		copy(before[off+10:off+12], ip[10:12])
		if !bytes.Equal(f, before) {
			t.Fatal("SetCE changed more than the TOS and checksum")
		}
		if _, ect, _ := Classify(f, 1); !ect {
			t.Fatal("CE packet not ECN-capable")
		}
	}
	// One fixed header: the checksum changes, to the recomputed value.
	h := v4{tos: 0x02, id: 0x1c46, frag: 0x4000, ttl: 64, proto: protoTCP, src: "172.16.10.99", dst: "172.16.10.12"}
	f := ether(etherIPv4, h.build(tcp(1, 2)))
	old := binary.BigEndian.Uint16(f[24:26])
	if !SetCE(f) || binary.BigEndian.Uint16(f[24:26]) == old || binary.BigEndian.Uint16(f[24:26]) != fullChecksum(f[14:34]) {
		t.Fatalf("checksum %#04x -> %#04x, want %#04x", old, binary.BigEndian.Uint16(f[24:26]), fullChecksum(f[14:34]))
	}
}

func TestSetCEIPv6(t *testing.T) {
	for _, c := range []struct {
		tc   byte
		ok   bool
		want byte
	}{{0x00, false, 0x00}, {0xb8, false, 0xb8}, {0x01, true, 0x03}, {0x02, true, 0x03}, {0xba, true, 0xbb}, {0x03, true, 0x03}} {
		h := v6{tc: c.tc, label: 0xabcde, next: protoUDP, src: "2001:db8::1", dst: "2001:db8::2"}
		f := ether(etherIPv6, h.build(udp(1, 2)))
		before := bytes.Clone(f)
		if got := SetCE(f); got != c.ok {
			t.Fatalf("TC %#x: SetCE %v", c.tc, got)
		}
		w := binary.BigEndian.Uint32(f[14:18])
		if tc := byte(w >> 20); tc != c.want || w>>28 != 6 || w&0xfffff != 0xabcde {
			t.Fatalf("TC %#x: word %#08x after SetCE, want TC %#x, version and flow label kept", c.tc, w, c.want)
		}
		if !bytes.Equal(f[18:], before[18:]) {
			t.Fatal("SetCE changed more than the traffic class")
		}
	}
	if SetCE(ether(0x0806, make([]byte, 28))) {
		t.Fatal("SetCE on ARP")
	}
	if SetCE(make([]byte, 10)) {
		t.Fatal("SetCE on a runt")
	}
}
