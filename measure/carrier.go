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

// StateAtEnd is c's state once its use is over: a carrier whose end
// records more when it stops (a quinn carrier's connection statistics) is
// closed first, so that its state holds them; any other is read as it is
// and left open.
func StateAtEnd(c interface {
	State() transport.State
	Close() error
}) transport.State {
	if e, ok := c.(interface{ recordsAtExit() }); ok {
		e.recordsAtExit()
		c.Close()
	}
	return c.State()
}

// carrierArms are the arms with carriers: the transport package's tcp,
// quic and quic-per-channel, and tcp-mux (tcp-<controller> and
// quinn-<controller> too, by name).
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
	_, ok, err := pinnedQuinn(name)
	switch {
	case ok:
		return transport.Arm(name), nil
	case err != nil && name != string(QuinnPriority):
		return "", err
	case name == string(transport.ArmQUICPriority) || name == string(QuinnPriority):
		return "", fmt.Errorf("%s has no channel to prioritise when channels arrive over time; use %s", name, carrierArmList())
	case name == string(Quinn):
		return "", fmt.Errorf("a carrier has no cell whose congestion control quinn could run: name quinn's controller, quinn-cubic, quinn-newreno or quinn-bbr")
	}
	return "", fmt.Errorf("%q is not an arm with carriers: use %s, tcp-<controller> (tcp with its own congestion control) "+
		"or quinn-<controller> (quinn-cubic, quinn-newreno, quinn-bbr)", name, carrierArmList())
}

func carrierArmList() string {
	arms := carrierArms()
	names := make([]string, len(arms))
	for i, a := range arms {
		names[i] = string(a)
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// DialCarrier dials a carrier of arm (any ParseCarrierArm accepts) to a
// ListenCarrier of the same arm at addr. A quinn-<controller> carrier
// starts quinn's client end here (in o.ListenPacket's namespace, if set),
// which dies with this process.
func DialCarrier(ctx context.Context, arm transport.Arm, addr string, o transport.Options) (ArmCarrier, error) {
	if arm == transport.ArmTCPMux {
		return transport.DialMuxCarrier(ctx, addr, o)
	}
	if q, ok, _ := pinnedQuinn(string(arm)); ok {
		return dialQuinnCarrier(ctx, q, addr, o)
	}
	if cc, ok := Arm(arm).PinnedCC(); ok {
		arm, o.CongestionControl = transport.ArmTCP, cc
	}
	return transport.DialCarrier(ctx, arm, addr, o)
}

// ListenCarrier listens at addr for carriers of arm (any ParseCarrierArm
// accepts); for quinn-<controller>, with quinn's server end started as
// DialCarrier starts the client end.
func ListenCarrier(ctx context.Context, arm transport.Arm, addr string, o transport.Options) (ArmCarrierListener, error) {
	if arm == transport.ArmTCPMux {
		return transport.ListenMuxCarrier(ctx, addr, o)
	}
	if q, ok, _ := pinnedQuinn(string(arm)); ok {
		return listenQuinnCarrier(ctx, q, addr, o)
	}
	if cc, ok := Arm(arm).PinnedCC(); ok {
		arm, o.CongestionControl = transport.ArmTCP, cc
	}
	return transport.ListenCarrier(ctx, arm, addr, o)
}
