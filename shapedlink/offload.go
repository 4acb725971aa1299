package shapedlink

import (
	"fmt"
	"strings"
)

// Offload is what one veth end's segmentation and receive offload settings
// were read back as, after New set them. Every field comes from the kernel,
// not from what was requested.
type Offload struct {
	Namespace  string `json:"namespace"` // "server", "client" or "shaper"
	Device     string `json:"device"`
	MTU        int    `json:"mtu"`
	GSOMaxSegs uint32 `json:"gso_max_segs"` // netlink IFLA_GSO_MAX_SEGS; 1 means no GSO super-packet
	GSOMaxSize uint32 `json:"gso_max_size"` // netlink IFLA_GSO_MAX_SIZE
	TSO        bool   `json:"tso"`          // ethtool tcp-segmentation-offload
	GSO        bool   `json:"gso"`          // ethtool generic-segmentation-offload
	GRO        bool   `json:"gro"`          // ethtool generic-receive-offload
	// TxChecksum is ethtool tx-checksumming. It is turned off so every
	// frame carries a complete checksum when it leaves the sender: the
	// emulator's AF_PACKET sockets would otherwise forward frames whose
	// checksum the kernel had left for "hardware" to fill in, and the
	// receiver would drop them.
	TxChecksum bool `json:"tx_checksum"`
	// UncutSegmentation lists the segmentation offloads on at the end
	// whose super-packets the emulator cannot cut into wire segments
	// (tunnels, GSO partial, SCTP, ESP, fraglist; ethtool's names). A
	// link keeping offloads through the emulator turns them off at its
	// outer ends, so there it is empty.
	UncutSegmentation []string `json:"uncut_segmentation,omitempty"`
	// UDPSegmentation is ethtool tx-udp-segmentation (UDP GSO).
	UDPSegmentation bool `json:"udp_segmentation"`
}

// WireSized reports whether the settings force every skb leaving the device
// to be one wire packet: GSO max segs 1, GSO max size no more than the MTU
// plus headroom, and TSO, GSO and GRO off.
func (o Offload) WireSized() bool {
	return o.GSOMaxSegs == 1 && o.GSOMaxSize <= wireGSOMaxSize && !o.TSO && !o.GSO && !o.GRO && !o.TxChecksum
}

// String renders o like "server qbsrv0: mtu 1500 gso_max_segs 1
// gso_max_size 1500 tso off gso off gro off tx-checksum off udp-gso off",
// followed by "uncut" and UncutSegmentation when it is not empty.
func (o Offload) String() string {
	s := fmt.Sprintf("%s %s: mtu %d gso_max_segs %d gso_max_size %d tso %s gso %s gro %s tx-checksum %s udp-gso %s",
		o.Namespace, o.Device, o.MTU, o.GSOMaxSegs, o.GSOMaxSize, onOff(o.TSO), onOff(o.GSO), onOff(o.GRO), onOff(o.TxChecksum), onOff(o.UDPSegmentation))
	if len(o.UncutSegmentation) > 0 {
		s += " uncut " + strings.Join(o.UncutSegmentation, ",")
	}
	return s
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// wireGSOMaxSize is the GSO max size set on every veth end.
const wireGSOMaxSize = 1500
