package inproc

import (
	"encoding/binary"
	"net/netip"
)

// This file is the far end of a direction: what the receiving host would
// do with a frame the link lets through. The link is its own receiver,
// so it applies the receiver's checks itself: a corrupted frame is
// dropped where the receiver's checksum (or its device, or IP) would
// drop it, and a datagram goes to the socket bound to its destination
// port, whose queue is bounded like a socket's receive buffer.

// deliver moves frame f (size bytes on the wire) to the far end's socket
// at time now.
func (d *direction) deliver(f frame, size int, now int64) {
	if f.edit.Corrupt && !corruptionPasses(f.from, f.to, f.data, f.edit.Bit) {
		d.c.ChecksumDrops++
		d.event(f, size, ChecksumDrop, now, 0)
		return
	}
	c := d.to.bound(f.to.Port())
	switch {
	case c == nil:
		d.c.NoSocketDrops++
		d.event(f, size, NoSocket, now, 0)
	case !c.push(f.from, f.data):
		d.c.SocketDrops++
		d.event(f, size, SocketDrop, now, 0)
	default:
		d.event(f, size, Delivered, now, 0)
	}
}

// Where the bytes of the frame the emulator would carry lie.
const (
	ethSrc      = 6  // the Ethernet source address, bytes 6-11
	ethType     = 12 // the EtherType; the IPv4 header starts after it
	udpChecksum = 40 // the UDP checksum, bytes 40-41; the payload starts at 42
)

// corruptionPasses says whether a datagram from src to dst with payload
// p, sent as a frame (Ethernet, IPv4 without options, UDP) with bit bit
// flipped (bit/8 the byte, bit%8 the bit, as linkmodel.Edit counts
// them), would still reach its socket, unchanged, as it does behind the
// emulator: a flip in the Ethernet source address, which nothing
// checks; one of the destination address's group bit, which makes it a
// multicast frame the host still takes (an IPv4 host keeps a unicast
// datagram that came as link-layer multicast unless told to drop it); or
// one that turns the UDP checksum into zero, which in IPv4 means "no
// checksum". Anywhere else the device (another destination address), the
// stack (another EtherType), IP's header checksum or UDP's checksum drops
// it.
func corruptionPasses(src, dst netip.AddrPort, p []byte, bit uint32) bool {
	at, mask := int(bit/8), byte(1)<<(bit%8)
	switch {
	case at == 0 && mask == 1:
		return true // the group bit of the destination address
	case at >= ethSrc && at < ethType:
		return true
	case at == udpChecksum || at == udpChecksum+1:
		sum := udpSum(src, dst, p)
		var field [2]byte
		binary.BigEndian.PutUint16(field[:], sum)
		field[at-udpChecksum] ^= mask
		return field == [2]byte{}
	}
	return false
}

// udpSum is the UDP checksum the sender puts in the datagram's header
// (RFC 768: a computed zero is sent as all ones).
func udpSum(src, dst netip.AddrPort, p []byte) uint16 {
	n := 8 + len(p)
	var sum uint32
	add := func(b []byte) {
		for len(b) >= 2 {
			sum += uint32(binary.BigEndian.Uint16(b))
			b = b[2:]
		}
		if len(b) == 1 {
			sum += uint32(b[0]) << 8
		}
	}
	s, d := src.Addr().As4(), dst.Addr().As4()
	add(s[:])
	add(d[:])
	var rest [12]byte // protocol and length, then the UDP header with a zero checksum
	rest[1] = 17
	binary.BigEndian.PutUint16(rest[2:], uint16(n))
	binary.BigEndian.PutUint16(rest[4:], src.Port())
	binary.BigEndian.PutUint16(rest[6:], dst.Port())
	binary.BigEndian.PutUint16(rest[8:], uint16(n))
	add(rest[:])
	add(p)
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	if c := ^uint16(sum); c != 0 {
		return c
	}
	return 0xffff
}

// header is the Ethernet, IPv4 and UDP headers of a datagram of n payload
// bytes from src to dst, as far as a queue discipline's classifier reads
// them (addresses, protocol, ports; the ECN field Not-ECT).
func header(src, dst netip.AddrPort, n int) []byte {
	h := make([]byte, wireOverhead)
	binary.BigEndian.PutUint16(h[ethType:], 0x0800)
	ip := h[14:34]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(20+8+n))
	ip[8], ip[9] = 64, 17
	s, d := src.Addr().As4(), dst.Addr().As4()
	copy(ip[12:16], s[:])
	copy(ip[16:20], d[:])
	udp := h[34:]
	binary.BigEndian.PutUint16(udp[0:], src.Port())
	binary.BigEndian.PutUint16(udp[2:], dst.Port())
	binary.BigEndian.PutUint16(udp[4:], uint16(8+n))
	return h
}
