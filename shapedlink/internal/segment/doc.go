// Package segment cuts a segmentation-offload super-packet into runs of
// its wire segments, as the kernel's own segmentation would cut it, so a
// shaper can judge every wire segment on its own and still send the ones
// that leave together as one frame.
//
// A super-packet reaches a packet socket with PACKET_VNET_HDR as one
// frame and a virtio_net_hdr saying how it is to be cut (gso_type,
// gso_size). Parse reads the two and says how many wire segments the
// frame stands for and how long each is on the wire; Run writes the
// virtio-net header and the headers of segments first to last sent as one
// frame, whose payload is Payload(first, last): a run of several stays a
// super-packet for the receiver's stack, a run of one is a plain frame.
// TCP over IPv4 and IPv6 and UDP_SEGMENT (whole datagrams) are cut; other
// super-packets (UFO, tunnels, IPv6 extension headers, a VLAN tag in the
// frame) and those whose headers are inconsistent (a header length below
// the minimum, headers beyond the frame, an IP length its field cannot
// hold) are refused with errNotSplittable, and a shaper carries them
// whole.
//
// Use:
//
//	f, err := segment.Parse(buf[:segment.VnetLen], buf[segment.VnetLen:])
//	for i := range f.Segments() {
//		judge(f.SegLen(i)) // each wire segment's length
//	}
//	hdr := f.Run(0, 2, scratch)    // segments 0-2, together
//	send(hdr, f.Payload(0, 2))
package segment
