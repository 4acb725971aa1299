package segment_test

import (
	"encoding/binary"
	"fmt"

	"github.com/shakenfist/quicbench/shapedlink/internal/segment"
)

// A UDP_SEGMENT super-packet of three 1000-byte datagrams (and one of
// 200) is four wire segments; the middle two leave together as a
// super-packet of two.
func Example() {
	frame := make([]byte, 14+20+8+3200)
	binary.BigEndian.PutUint16(frame[12:], 0x0800)
	frame[14], frame[14+9] = 0x45, 17
	vnet := make([]byte, segment.VnetLen)
	vnet[0], vnet[1] = 1, 5 // VIRTIO_NET_HDR_F_NEEDS_CSUM, VIRTIO_NET_HDR_GSO_UDP_L4
	binary.NativeEndian.PutUint16(vnet[4:], 1000)

	f, err := segment.Parse(vnet, frame)
	if err != nil {
		fmt.Println(err)
		return
	}
	for i := range f.Segments() {
		fmt.Println("segment", i, f.SegLen(i), "bytes on the wire")
	}
	run := f.Run(1, 2, make([]byte, segment.VnetLen+len(frame)))
	fmt.Println("run 1-2:", len(run)-segment.VnetLen, "bytes of headers,", len(f.Payload(1, 2)), "of payload, gso_size", binary.NativeEndian.Uint16(run[4:]))
	// Output:
	// segment 0 1042 bytes on the wire
	// segment 1 1042 bytes on the wire
	// segment 2 1042 bytes on the wire
	// segment 3 242 bytes on the wire
	// run 1-2: 42 bytes of headers, 2000 of payload, gso_size 1000
}
