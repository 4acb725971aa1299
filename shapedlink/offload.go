package shapedlink

import (
	"fmt"
	"strings"
)

// Offload is one veth end's offload settings as read back from the
// kernel.
type Offload struct {
	Namespace  string `json:"namespace"` // "server", "client" or "shaper"
	Device     string `json:"device"`
	MTU        int    `json:"mtu"`
	GSOMaxSegs uint32 `json:"gso_max_segs"` // netlink IFLA_GSO_MAX_SEGS; 1 means no GSO super-packet
	GSOMaxSize uint32 `json:"gso_max_size"` // netlink IFLA_GSO_MAX_SIZE
	TSO        bool   `json:"tso"`          // ethtool tcp-segmentation-offload
	GSO        bool   `json:"gso"`          // ethtool generic-segmentation-offload
	GRO        bool   `json:"gro"`          // ethtool generic-receive-offload
	TxChecksum bool   `json:"tx_checksum"`  // ethtool tx-checksumming
	// UncutSegmentation lists the segmentation offloads on whose
	// super-packets the emulator cannot cut (ethtool's names).
	UncutSegmentation []string `json:"uncut_segmentation,omitempty"`
	UDPSegmentation   bool     `json:"udp_segmentation"` // ethtool tx-udp-segmentation
}

// WireSized reports whether every skb leaving the device is one wire
// packet with a complete checksum.
func (o Offload) WireSized() bool {
	return o.GSOMaxSegs == 1 && o.GSOMaxSize <= wireGSOMaxSize && !o.TSO && !o.GSO && !o.GRO && !o.TxChecksum
}

// String renders o like "server qbsrv0: mtu 1500 gso_max_segs 1
// gso_max_size 1500 tso off gso off gro off tx-checksum off udp-gso off".
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
