//go:build !linux

package shapedlink

import (
	"context"
	"errors"
	"net/netip"
)

// tcpCross carries TCP cross flows on Linux only.
type tcpCross struct{ cc string }

func (tcpCross) Receive(context.Context, *Namespace, netip.AddrPort, func(int)) (netip.AddrPort, error) {
	return netip.AddrPort{}, errors.ErrUnsupported
}

func (tcpCross) Send(context.Context, *Namespace, netip.AddrPort) (CrossSender, error) {
	return nil, errors.ErrUnsupported
}
