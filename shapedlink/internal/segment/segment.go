package segment

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The virtio_net_hdr that AF_PACKET's PACKET_VNET_HDR puts before every
// frame (include/uapi/linux/virtio_net.h): flags, gso_type, hdr_len,
// gso_size, csum_start, csum_offset, in the host's byte order (a legacy
// header on a little-endian host, as the kernel writes it for packet
// sockets).
const (
	VnetLen = 10

	vnetFlagsAt      = 0
	vnetGSOTypeAt    = 1
	vnetHdrLenAt     = 2
	vnetGSOSizeAt    = 4
	vnetCsumStartAt  = 6
	vnetCsumOffsetAt = 8

	// flagNeedsCsum is VIRTIO_NET_HDR_F_NEEDS_CSUM: the checksum at
	// csum_start+csum_offset holds the pseudo-header's sum and is to be
	// finished over csum_start onwards.
	flagNeedsCsum = 1

	// The gso_type values, and the ECN bit that may be or'ed in.
	gsoNone  = 0
	gsoTCPv4 = 1
	gsoUDP   = 3 // UFO, IP fragmentation: not split here
	gsoTCPv6 = 4
	gsoUDPL4 = 5 // UDP_SEGMENT: whole datagrams
	gsoECN   = 0x80
)

// errNotSplittable is wrapped by Parse for a super-packet this package
// cannot cut (UFO, a tunnel, an IPv6 extension header, a VLAN tag in the
// frame, a header that does not parse or whose lengths are inconsistent):
// the caller carries it whole.
var errNotSplittable = errors.New("segment: not a TCP or UDP_SEGMENT super-packet of IPv4 or IPv6 this package can cut")

// Frame is one frame as a packet socket with PACKET_VNET_HDR received it,
// parsed into the wire segments it stands for. A frame that is not a
// super-packet is one segment, itself.
type Frame struct {
	frame []byte // the Ethernet frame, virtio-net header not included

	gsoType   uint8 // without the ECN bit
	ecnBit    uint8
	gsoSize   int // payload bytes per segment
	needsCsum bool

	l3, l4, hdr int // offsets of the IP header and the transport header; the headers' length
	ipv6, tcp   bool
	segs        int
}

// Parse reads vnet (a virtio_net_hdr) and frame (the Ethernet frame after
// it). A frame whose gso_type is none is one segment; a TCP (IPv4 or
// IPv6) or UDP_SEGMENT super-packet is as many segments as its payload
// makes at gso_size each (the last shorter). Anything else that claims to
// be a super-packet is refused with errNotSplittable.
func Parse(vnet, frame []byte) (Frame, error) {
	f := Frame{frame: frame, segs: 1}
	if len(vnet) < VnetLen {
		return f, fmt.Errorf("segment: a virtio-net header of %d bytes, want %d", len(vnet), VnetLen)
	}
	f.needsCsum = vnet[vnetFlagsAt]&flagNeedsCsum != 0
	f.gsoType, f.ecnBit = vnet[vnetGSOTypeAt]&^gsoECN, vnet[vnetGSOTypeAt]&gsoECN
	f.gsoSize = int(binary.NativeEndian.Uint16(vnet[vnetGSOSizeAt:]))
	if f.gsoType == gsoNone {
		return f, nil
	}
	if f.gsoType != gsoTCPv4 && f.gsoType != gsoTCPv6 && f.gsoType != gsoUDPL4 || f.gsoSize == 0 {
		return f, fmt.Errorf("%w (gso_type %d, gso_size %d)", errNotSplittable, f.gsoType, f.gsoSize)
	}
	if err := f.headers(); err != nil {
		return f, err
	}
	payload := len(frame) - f.hdr
	if payload <= 0 {
		return f, fmt.Errorf("%w (no payload after %d bytes of headers)", errNotSplittable, f.hdr)
	}
	f.segs = (payload + f.gsoSize - 1) / f.gsoSize
	return f, nil
}

// headers finds the IP and transport headers of a super-packet.
func (f *Frame) headers() error {
	b := f.frame
	if len(b) < 14 {
		return fmt.Errorf("%w (%d bytes, no Ethernet header)", errNotSplittable, len(b))
	}
	f.l3 = 14
	var proto byte
	switch binary.BigEndian.Uint16(b[12:]) {
	case 0x0800:
		if len(b) < f.l3+20 || b[f.l3]>>4 != 4 {
			return fmt.Errorf("%w (a short or malformed IPv4 header)", errNotSplittable)
		}
		ihl := int(b[f.l3] & 0xf)
		if ihl < 5 {
			return fmt.Errorf("%w (an IPv4 header length of %d words, below the 5 of a header without options)", errNotSplittable, ihl)
		}
		f.l4 = f.l3 + ihl*4
		proto = b[f.l3+9]
	case 0x86dd:
		f.ipv6 = true
		if len(b) < f.l3+40 {
			return fmt.Errorf("%w (a short IPv6 header)", errNotSplittable)
		}
		f.l4 = f.l3 + 40
		proto = b[f.l3+6]
	default:
		return fmt.Errorf("%w (ethertype %#04x)", errNotSplittable, binary.BigEndian.Uint16(b[12:]))
	}
	switch {
	case proto == 6 && f.gsoType != gsoUDPL4:
		if len(b) < f.l4+20 {
			return fmt.Errorf("%w (a short TCP header)", errNotSplittable)
		}
		f.tcp = true
		doff := int(b[f.l4+12] >> 4)
		if doff < 5 {
			return fmt.Errorf("%w (a TCP data offset of %d words, below the 5 of a header without options)", errNotSplittable, doff)
		}
		f.hdr = f.l4 + doff*4
	case proto == 17 && f.gsoType == gsoUDPL4:
		f.hdr = f.l4 + 8
	default:
		return fmt.Errorf("%w (IP protocol %d for gso_type %d)", errNotSplittable, proto, f.gsoType)
	}
	if f.hdr > len(b) || f.l4 >= f.hdr {
		return fmt.Errorf("%w (headers of %d bytes in a %d-byte frame)", errNotSplittable, f.hdr, len(b))
	}
	// A run of every segment is sent with the IP length it has now, which
	// must fit the 16-bit field.
	ipLen, field := len(b)-f.l3, "IPv4 total length"
	if f.ipv6 {
		ipLen, field = len(b)-f.l4, "IPv6 payload length"
	}
	if ipLen > 0xffff {
		return fmt.Errorf("%w (%d bytes, more than its %s can say)", errNotSplittable, ipLen, field)
	}
	return nil
}

// Segments is how many wire segments the frame stands for.
func (f *Frame) Segments() int { return f.segs }

// Bytes is the frame as received.
func (f *Frame) Bytes() []byte { return f.frame }

// Split reports whether the frame is a super-packet (more than one
// segment, or a gso_type that must be cleared when it is sent alone).
func (f *Frame) Split() bool { return f.gsoType != gsoNone }

// payload is the payload bytes of segment i.
func (f *Frame) payload(i int) (from, to int) {
	from = f.hdr + i*f.gsoSize
	return from, min(from+f.gsoSize, len(f.frame))
}

// SegLen is the wire length of segment i: its headers and its payload,
// the Ethernet header included (what a wire-sized frame would be).
func (f *Frame) SegLen(i int) int {
	if !f.Split() {
		return len(f.frame)
	}
	from, to := f.payload(i)
	return f.hdr + to - from
}

// Payload is the payload of segments first to last, contiguous in the
// frame.
func (f *Frame) Payload(first, last int) []byte {
	from, _ := f.payload(first)
	_, to := f.payload(last)
	return f.frame[from:to]
}

// Run writes into dst, which must hold VnetLen bytes more than the
// frame's headers (VnetLen plus the frame's length always does), the
// virtio-net header and the headers with which segments first to last
// leave as one frame, followed by Payload(first, last); it returns the
// bytes written. The headers are what the kernel's own segmentation
// (tcp_gso_segment, __udp_gso_segment, inet_gso_segment) gives the run:
// the IP total or payload length and, for IPv4, the identifier advanced
// by first and the header checksum; for TCP the sequence number advanced
// by first segments, CWR only on the first segment and FIN and PSH only
// on the last; for UDP the length. The transport checksum is left to be
// finished (the pseudo-header's sum, NEEDS_CSUM), as the sender left it.
// A run of more than one segment stays a super-packet of the same
// gso_type and gso_size; a run of one is a plain frame.
func (f *Frame) Run(first, last int, dst []byte) []byte {
	n := last - first + 1
	payload := len(f.Payload(first, last))
	out := dst[:VnetLen+f.hdr]
	vnet, h := out[:VnetLen], out[VnetLen:]
	copy(h, f.frame[:f.hdr])
	l4len := f.hdr - f.l4 + payload
	if f.ipv6 {
		binary.BigEndian.PutUint16(h[f.l3+4:], uint16(l4len))
	} else {
		ip := h[f.l3:f.l4]
		binary.BigEndian.PutUint16(ip[2:], uint16(len(ip)+l4len))
		binary.BigEndian.PutUint16(ip[4:], binary.BigEndian.Uint16(ip[4:])+uint16(first))
		ip[10], ip[11] = 0, 0
		binary.BigEndian.PutUint16(ip[10:], ^fold(sum16(ip)))
	}
	csumAt := 6
	if f.tcp {
		th := h[f.l4:]
		binary.BigEndian.PutUint32(th[4:], binary.BigEndian.Uint32(th[4:])+uint32(first*f.gsoSize))
		const fin, psh, cwr = 0x01, 0x08, 0x80
		if first > 0 {
			th[13] &^= cwr
		}
		if last < f.segs-1 {
			th[13] &^= fin | psh
		}
		csumAt = 16
	} else {
		binary.BigEndian.PutUint16(h[f.l4+4:], uint16(l4len))
	}
	binary.BigEndian.PutUint16(h[f.l4+csumAt:], fold(f.pseudo(h, l4len)))

	clear(vnet)
	vnet[vnetFlagsAt] = flagNeedsCsum
	binary.NativeEndian.PutUint16(vnet[vnetCsumStartAt:], uint16(f.l4))
	binary.NativeEndian.PutUint16(vnet[vnetCsumOffsetAt:], uint16(csumAt))
	binary.NativeEndian.PutUint16(vnet[vnetHdrLenAt:], uint16(f.hdr))
	if n > 1 {
		vnet[vnetGSOTypeAt] = f.gsoType
		if first == 0 {
			vnet[vnetGSOTypeAt] |= f.ecnBit
		}
		binary.NativeEndian.PutUint16(vnet[vnetGSOSizeAt:], uint16(f.gsoSize))
	}
	return out
}

// pseudo is the transport pseudo-header's sum for the headers h (which
// hold the addresses) and a transport length of l4len.
func (f *Frame) pseudo(h []byte, l4len int) uint32 {
	var s uint32
	if f.ipv6 {
		s = sum16(h[f.l3+8:f.l3+40]) + uint32(l4len>>16) + uint32(l4len&0xffff)
	} else {
		s = sum16(h[f.l3+12:f.l3+20]) + uint32(l4len)
	}
	proto := uint32(17)
	if f.tcp {
		proto = 6
	}
	return s + proto
}

// sum16 is the ones' complement sum of b as big-endian 16-bit words (a
// last odd byte padded with zero), not yet folded.
func sum16(b []byte) uint32 {
	var s uint32
	for ; len(b) >= 2; b = b[2:] {
		s += uint32(binary.BigEndian.Uint16(b))
	}
	if len(b) == 1 {
		s += uint32(b[0]) << 8
	}
	return s
}

// fold folds a ones' complement sum to 16 bits.
func fold(s uint32) uint16 {
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return uint16(s)
}
