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

// A path change moves the client to a new address on the same link: the
// client's veth gets a second address in the link's /24, the server gets a
// permanent neighbour entry for it (the same arrangement New makes for the
// first address, so no ARP ever crosses the shaped link), and later the old
// address and its neighbour entry are removed. Whatever the server then
// sends to the old address is dropped by the client's kernel, which no
// longer owns it (and does not forward), and whatever a socket bound to the
// old address tries to send fails locally: the old address has left the
// network, as a Wi-Fi address does when a laptop moves to LTE.
//
// The shaper needs nothing: the emulator forwards frames like a bridge, and
// netem shapes the veth whatever addresses it carries.

// AddClientAddr gives the client end a further address, the lowest free one
// in 198.18.0.3 to 198.18.0.254, with a permanent neighbour entry for it on
// the server end, and returns it. Sockets in the client namespace can bind
// to it at once. The kernel keeps choosing the original address as the
// source for new connections until that is removed (the new one is a
// secondary address of the same subnet), so adding an address disturbs no
// connection. Secondary addresses are set to be promoted, so removing the
// original one later keeps the new one and the subnet's route.
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

// RemoveClientAddr removes addr from the client end, and its neighbour
// entry from the server end, so the address is gone from the link. It
// refuses to remove the client's last address, an address outside the
// link's /24, and the server's address. Established TCP connections and
// sockets bound to addr are not closed by this: they simply can no longer
// send or receive.
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

// ClientAddrs lists the IPv4 addresses the client end has now, in the
// kernel's order (the one used as source for new connections first).
// ClientAddr, by contrast, is the address the link was built with. The
// in-process link's client end has that address only.
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
