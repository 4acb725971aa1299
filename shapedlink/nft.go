package shapedlink

// Counter is a packet and byte count from an nftables counter.
type Counter struct {
	Packets uint64 `json:"packets"`
	Bytes   uint64 `json:"bytes"`
}

// EgressCounters count what leaves one veth end at its nftables egress
// hook, before any qdisc and before software segmentation.
type EgressCounters struct {
	All Counter `json:"all"`
	// Oversize counts packets longer than one wire packet: super-packets.
	Oversize Counter `json:"oversize"`
}
