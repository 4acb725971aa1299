package shapedlink

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// AddClientAddr gives the client end a further address, the lowest free
// one from 198.18.0.3, with a permanent neighbour entry for it on the
// server end, and returns it. The original address stays the source of
// new connections until RemoveClientAddr removes it.
func (c *Control) AddClientAddr(ctx context.Context) (netip.Addr, error) {
	l := c.l
	if l.client.inProcess() {
		return netip.Addr{}, l.client.sim.refuse("AddClientAddr", "each of its ends has one address")
	}
	if err := l.Err(); err != nil {
		return netip.Addr{}, err
	}
	// Removing the primary address of a subnet deletes its secondaries too
	// unless promotion is on; turn it on before there is a secondary.
	key := "net/ipv4/conf/" + clientDev + "/promote_secondaries"
	if err := l.client.Do(func() error { return writeSysctl(key, "1") }); err != nil {
		return netip.Addr{}, fmt.Errorf("shapedlink: enabling %s in the client namespace: %w", key, err)
	}
	hc, err := l.client.handle()
	if err != nil {
		return netip.Addr{}, err
	}
	defer hc.Close()
	hs, err := l.server.handle()
	if err != nil {
		return netip.Addr{}, err
	}
	defer hs.Close()
	cli, err := hc.LinkByName(clientDev)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("shapedlink: finding %s in the client namespace: %w", clientDev, err)
	}
	srv, err := hs.LinkByName(serverDev)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("shapedlink: finding %s in the server namespace: %w", serverDev, err)
	}
	// Start past every address the client has had: .3 upwards.
	for a := clientAddr.Next(); a.IsValid() && a.As4()[3] < 255; a = a.Next() {
		if err := ctx.Err(); err != nil {
			return netip.Addr{}, err
		}
		na := &netlink.Addr{IPNet: &net.IPNet{IP: a.AsSlice(), Mask: net.CIDRMask(prefixLen, 32)}}
		if err := hc.AddrAdd(cli, na); err != nil {
			if errors.Is(err, unix.EEXIST) {
				continue // in use (added before, or the original)
			}
			return netip.Addr{}, fmt.Errorf("shapedlink: adding %s/%d to %s: %w", a, prefixLen, clientDev, err)
		}
		n := &netlink.Neigh{LinkIndex: srv.Attrs().Index, Family: unix.AF_INET, State: netlink.NUD_PERMANENT,
			IP: a.AsSlice(), HardwareAddr: cli.Attrs().HardwareAddr}
		if err := hs.NeighSet(n); err != nil {
			_ = hc.AddrDel(cli, na)
			return netip.Addr{}, fmt.Errorf("shapedlink: adding the neighbour entry %s -> %s on %s: %w", a, cli.Attrs().HardwareAddr, serverDev, err)
		}
		l.log.Info("shapedlink: client address added", "addr", a, "dev", clientDev)
		return a, nil
	}
	return netip.Addr{}, fmt.Errorf("shapedlink: no free client address left in %s/%d: remove some with RemoveClientAddr", serverAddr, prefixLen)
}

// RemoveClientAddr removes addr from the client end and its neighbour
// entry from the server end; sockets bound to it stay open but can no
// longer send or receive. It refuses the client's last address and any
// that is not the client's.
func (c *Control) RemoveClientAddr(addr netip.Addr) error {
	l := c.l
	if l.client.inProcess() {
		return l.client.sim.refuse("RemoveClientAddr", "each of its ends has one address")
	}
	if err := l.Err(); err != nil {
		return err
	}
	if !addr.Is4() || !netip.PrefixFrom(serverAddr, prefixLen).Masked().Contains(addr) || addr == serverAddr {
		return fmt.Errorf("shapedlink: %s is not a client address of this link (client addresses are in %s/%d, other than %s)",
			addr, serverAddr, prefixLen, serverAddr)
	}
	have, err := c.ClientAddrs()
	if err != nil {
		return err
	}
	found := false
	for _, a := range have {
		found = found || a == addr
	}
	if !found {
		return fmt.Errorf("shapedlink: the client end has no address %s (it has %v)", addr, have)
	}
	if len(have) == 1 {
		return fmt.Errorf("shapedlink: %s is the client's only address; add another with AddClientAddr before removing it", addr)
	}
	hc, err := l.client.handle()
	if err != nil {
		return err
	}
	defer hc.Close()
	hs, err := l.server.handle()
	if err != nil {
		return err
	}
	defer hs.Close()
	cli, err := hc.LinkByName(clientDev)
	if err != nil {
		return fmt.Errorf("shapedlink: finding %s in the client namespace: %w", clientDev, err)
	}
	srv, err := hs.LinkByName(serverDev)
	if err != nil {
		return fmt.Errorf("shapedlink: finding %s in the server namespace: %w", serverDev, err)
	}
	na := &netlink.Addr{IPNet: &net.IPNet{IP: addr.AsSlice(), Mask: net.CIDRMask(prefixLen, 32)}}
	if err := hc.AddrDel(cli, na); err != nil {
		return fmt.Errorf("shapedlink: removing %s/%d from %s: %w", addr, prefixLen, clientDev, err)
	}
	n := &netlink.Neigh{LinkIndex: srv.Attrs().Index, Family: unix.AF_INET, IP: addr.AsSlice()}
	if err := hs.NeighDel(n); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("shapedlink: removing the neighbour entry for %s on %s: %w", addr, serverDev, err)
	}
	l.log.Info("shapedlink: client address removed", "addr", addr, "dev", clientDev)
	return nil
}

// ClientAddrs lists the client end's IPv4 addresses now, the source of
// new connections first (ClientAddr is the one the link was built with).
func (c *Control) ClientAddrs() ([]netip.Addr, error) {
	l := c.l
	if l.client.inProcess() {
		return []netip.Addr{clientAddr}, nil
	}
	hc, err := l.client.handle()
	if err != nil {
		return nil, err
	}
	defer hc.Close()
	cli, err := hc.LinkByName(clientDev)
	if err != nil {
		return nil, fmt.Errorf("shapedlink: finding %s in the client namespace: %w", clientDev, err)
	}
	addrs, err := hc.AddrList(cli, unix.AF_INET)
	if err != nil {
		return nil, fmt.Errorf("shapedlink: listing the addresses of %s: %w", clientDev, err)
	}
	var out []netip.Addr
	for _, a := range addrs {
		if ip, ok := netip.AddrFromSlice(a.IP.To4()); ok {
			out = append(out, ip)
		}
	}
	return out, nil
}
