package shapedlink

// Sizes and device names, the same for every link.
const (
	prefixLen = 24
	linkMTU   = 1500

	serverDev      = "qbsrv0"  // in the server namespace
	clientDev      = "qbcli0"  // in the client namespace
	shaperSideSrv  = "qbshs0"  // in the shaper namespace, peer of serverDev
	shaperSideCli  = "qbshc0"  // in the shaper namespace, peer of clientDev
	wirePacketSize = 1500 + 14 // the longest frame one wire packet makes on a veth
)
