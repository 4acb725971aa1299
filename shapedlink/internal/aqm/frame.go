package aqm

import "encoding/binary"

// EtherTypes and IP protocol numbers Classify and SetCE understand.
const (
	etherIPv4 = 0x0800
	etherIPv6 = 0x86dd
	etherVLAN = 0x8100 // 802.1Q
	etherQinQ = 0x88a8 // 802.1ad service tag, taken as one tag like 802.1Q

	protoHopByHop = 0
	protoTCP      = 6
	protoUDP      = 17
	protoDCCP     = 33
	protoRouting  = 43
	protoFragment = 44
	protoDstOpts  = 60
	protoSCTP     = 132
	protoUDPLite  = 136
)

// ipHeader finds the IP header in an Ethernet frame: its offset and IP
// version (4 or 6), or version 0 when the frame is not IPv4 or IPv6 or
// too short to hold the fixed IP header. One VLAN tag is skipped.
func ipHeader(frame []byte) (off int, version int) {
	if len(frame) < 14 {
		return 0, 0
	}
	et := binary.BigEndian.Uint16(frame[12:14])
	off = 14
	if et == etherVLAN || et == etherQinQ {
		if len(frame) < 18 {
			return 0, 0
		}
		et = binary.BigEndian.Uint16(frame[16:18])
		off = 18
	}
	switch et {
	case etherIPv4:
		if len(frame) >= off+20 && frame[off]>>4 == 4 && frame[off]&0x0f >= 5 {
			return off, 4
		}
	case etherIPv6:
		if len(frame) >= off+40 && frame[off]>>4 == 6 {
			return off, 6
		}
	}
	return 0, 0
}

// hasPorts says the protocol's header starts with 16-bit source and
// destination ports.
func hasPorts(proto byte) bool {
	switch proto {
	case protoTCP, protoUDP, protoDCCP, protoSCTP, protoUDPLite:
		return true
	}
	return false
}

// Classify extracts what a Queue needs from an Ethernet frame (without
// FCS; one 802.1Q or 802.1ad tag is skipped): a flow hash of the
// packet's source and destination addresses, IP protocol and, for TCP,
// UDP, UDP-Lite, SCTP and DCCP, ports, seeded by seed; and whether its
// ECN field is not Not-ECT. ok is false for frames that are not IPv4 or
// IPv6, which the caller puts in flow 0 as not ECN-capable. Fragments,
// IPv6 extension headers and short frames hash without ports; the package
// doc has the rules and how the hash compares with Linux's.
func Classify(frame []byte, seed uint32) (flow uint32, ect bool, ok bool) {
	off, v := ipHeader(frame)
	h := fnvSeed(seed)
	switch v {
	case 4:
		ip := frame[off:]
		ihl := int(ip[0]&0x0f) * 4
		ect = ip[1]&3 != 0
		proto := ip[9]
		h = fnvBytes(h, ip[12:20])
		h = fnvByte(h, proto)
		fragment := binary.BigEndian.Uint16(ip[6:8])&0x3fff != 0 // MF or an offset
		if !fragment && hasPorts(proto) && len(ip) >= ihl+4 {
			h = fnvBytes(h, ip[ihl:ihl+4])
		}
		return finish(h), ect, true
	case 6:
		ip := frame[off:]
		ect = (ip[1]>>4)&3 != 0
		proto := ip[6]
		l4 := 40
		ports := true
		for hops := 0; ; hops++ {
			if proto != protoHopByHop && proto != protoRouting && proto != protoDstOpts {
				break
			}
			if hops == 4 || len(ip) < l4+8 {
				ports = false
				break
			}
			proto = ip[l4]
			l4 += 8 + 8*int(ip[l4+1])
		}
		if proto == protoFragment {
			ports = false
			if len(ip) >= l4+8 {
				proto = ip[l4]
			}
		}
		h = fnvBytes(h, ip[8:40])
		h = fnvByte(h, proto)
		if ports && hasPorts(proto) && len(ip) >= l4+4 {
			h = fnvBytes(h, ip[l4:l4+4])
		}
		return finish(h), ect, true
	}
	return 0, false, false
}

// SetCE sets the ECN field of the IPv4 or IPv6 packet in an Ethernet
// frame to CE (binary 11), as a CoDel mark, updating the IPv4 header
// checksum incrementally (RFC 1624, equation 3). It reports whether the
// packet now carries CE: false, and the frame untouched, when it is not
// IP or not ECN-capable (Not-ECT); true, and the frame untouched, when it
// already carried CE. Transport checksums do not cover the ECN field.
func SetCE(frame []byte) bool {
	off, v := ipHeader(frame)
	switch v {
	case 4:
		ip := frame[off:]
		switch ip[1] & 3 {
		case 0:
			return false
		case 3:
			return true
		}
		old := binary.BigEndian.Uint16(ip[0:2]) // version/IHL and TOS
		ip[1] |= 3
		word := old | 3
		// HC' = ~(~HC + ~m + m') in ones' complement arithmetic.
		sum := uint32(^binary.BigEndian.Uint16(ip[10:12])) + uint32(^old) + uint32(word)
		sum = sum&0xffff + sum>>16
		sum = sum&0xffff + sum>>16
		binary.BigEndian.PutUint16(ip[10:12], ^uint16(sum))
		return true
	case 6:
		// Traffic class straddles bytes 0 and 1; ECN is its low two
		// bits, bits 4-5 of byte 1.
		ip := frame[off:]
		if (ip[1]>>4)&3 == 0 {
			return false
		}
		ip[1] |= 0x30
		return true
	}
	return false
}

const (
	fnvOffset = 2166136261
	fnvPrime  = 16777619
)

func fnvByte(h uint32, b byte) uint32 { return (h ^ uint32(b)) * fnvPrime }

func fnvBytes(h uint32, b []byte) uint32 {
	for _, c := range b {
		h = (h ^ uint32(c)) * fnvPrime
	}
	return h
}

func fnvSeed(seed uint32) uint32 {
	h := uint32(fnvOffset)
	h = fnvByte(h, byte(seed))
	h = fnvByte(h, byte(seed>>8))
	h = fnvByte(h, byte(seed>>16))
	return fnvByte(h, byte(seed>>24))
}

// finish spreads FNV's weak low bits over the word (murmur3's fmix32
// constants), since a queue takes the hash modulo its number of flows.
func finish(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}
