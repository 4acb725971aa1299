package shapedlink

import (
	"fmt"
	"net/netip"
)

// End is one end of the link; what acts on an end acts on what it sends.
type End int

const (
	ServerEnd End = iota // egress: server to client (Down)
	ClientEnd            // egress: client to server (Up)
)

// valid says why e is neither ServerEnd nor ClientEnd, or nil.
func (e End) valid() error {
	if e != ServerEnd && e != ClientEnd {
		return fmt.Errorf("shapedlink: %v is not an end; use ServerEnd or ClientEnd", e)
	}
	return nil
}

// dir is the direction whose traffic leaves through e.
func (e End) dir() Dir {
	if e == ClientEnd {
		return Up
	}
	return Down
}

func (e End) String() string {
	switch e {
	case ServerEnd:
		return "server"
	case ClientEnd:
		return "client"
	}
	return fmt.Sprintf("End(%d)", int(e))
}

// The ends' addresses, the same for every link (each has its own
// namespaces).
var (
	serverAddr = netip.MustParseAddr("198.18.0.1")
	clientAddr = netip.MustParseAddr("198.18.0.2")
)
