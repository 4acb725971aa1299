//go:build !linux

package shapedlink

import (
	"context"
	"log/slog"
	"net/netip"
)

// newWithNamespaces fails: network namespaces need Linux.
func newWithNamespaces(ctx context.Context, p Profile, opts Options, log *slog.Logger) (*Link, error) {
	return nil, errUnsupported
}

// Reexec returns an error wrapping errors.ErrUnsupported: there are no
// namespaces here (BackendInProcess needs no privilege).
func Reexec() error { return errUnsupported }

// AddClientAddr adds an address to the client end; the in-process link,
// the only one here, has one address per end.
func (c *Control) AddClientAddr(ctx context.Context) (netip.Addr, error) {
	return netip.Addr{}, c.l.client.sim.refuse("AddClientAddr", "each of its ends has one address")
}

// RemoveClientAddr removes an address AddClientAddr added; the in-process
// link, the only one here, has one address per end.
func (c *Control) RemoveClientAddr(addr netip.Addr) error {
	return c.l.client.sim.refuse("RemoveClientAddr", "each of its ends has one address")
}

// ClientAddrs lists the client end's addresses: the in-process link's
// client end has its one.
func (c *Control) ClientAddrs() ([]netip.Addr, error) { return []netip.Addr{clientAddr}, nil }
