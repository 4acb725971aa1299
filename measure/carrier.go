package measure

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/shakenfist/quicbench/transport"
)

// ArmCarrier is the client end of a carrier of any arm that has one: channels
// opened one at a time, as a tunnel in front of a real application needs
// them (see transport.DialCarrier).
type ArmCarrier interface {
	Open(ctx context.Context) (transport.CarrierChannel, error)
	ID() uint64
	State() transport.State
	Close() error
}

// ArmCarrierListener is the server end of carriers of any arm that has them.
type ArmCarrierListener interface {
	Addr() net.Addr
	Accept(ctx context.Context) (transport.CarrierChannel, error)
	State() transport.State
	Close() error
}

// carrierArms are the arms with carriers: the transport package's tcp,
// quic and quic-per-channel, and tcp-mux.
func carrierArms() []transport.Arm {
	return []transport.Arm{transport.ArmTCP, transport.ArmQUIC, transport.ArmQUICPerChannel, transport.ArmTCPMux}
}

// ParseCarrierArm reads the name of an arm with carriers.
func ParseCarrierArm(name string) (transport.Arm, error) {
	for _, a := range carrierArms() {
		if string(a) == name {
			return a, nil
		}
	}
	if _, ok := Arm(name).PinnedCC(); ok {
		return transport.Arm(name), nil
	}
	if name == string(transport.ArmQUICPriority) {
		return "", fmt.Errorf("%s has no channel to prioritise when channels arrive over time; use %s", name, carrierArmList())
	}
	return "", fmt.Errorf("%q is not an arm with carriers: use %s, or tcp-<controller> (tcp with its own congestion control)", name, carrierArmList())
}

func carrierArmList() string {
	arms := carrierArms()
	names := make([]string, len(arms))
	for i, a := range arms {
		names[i] = string(a)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// DialCarrier dials a carrier of arm (tcp, quic, quic-per-channel or
// tcp-mux) to a ListenCarrier of the same arm at addr.
func DialCarrier(ctx context.Context, arm transport.Arm, addr string, o transport.Options) (ArmCarrier, error) {
	if arm == transport.ArmTCPMux {
		return transport.DialMuxCarrier(ctx, addr, o)
	}
	if cc, ok := Arm(arm).PinnedCC(); ok {
		arm, o.CongestionControl = transport.ArmTCP, cc
	}
	return transport.DialCarrier(ctx, arm, addr, o)
}

// ListenCarrier listens at addr for carriers of arm (tcp, quic,
// quic-per-channel or tcp-mux).
func ListenCarrier(ctx context.Context, arm transport.Arm, addr string, o transport.Options) (ArmCarrierListener, error) {
	if arm == transport.ArmTCPMux {
		return transport.ListenMuxCarrier(ctx, addr, o)
	}
	if cc, ok := Arm(arm).PinnedCC(); ok {
		arm, o.CongestionControl = transport.ArmTCP, cc
	}
	return transport.ListenCarrier(ctx, arm, addr, o)
}
