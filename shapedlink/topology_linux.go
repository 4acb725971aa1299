package shapedlink

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// prepareNamespace brings loopback up and turns IPv6 off for every device
// created later, so router solicitations and duplicate address detection
// never share a queue with the experiment's packets.
func prepareNamespace(ns *Namespace) error {
	h, err := ns.handle()
	if err != nil {
		return err
	}
	defer h.Close()
	lo, err := h.LinkByName("lo")
	if err != nil {
		return fmt.Errorf("shapedlink: finding lo in the %s namespace: %w", ns.role, err)
	}
	if err := h.LinkSetUp(lo); err != nil {
		return fmt.Errorf("shapedlink: bringing lo up in the %s namespace: %w", ns.role, err)
	}
	return ns.Do(func() error {
		for _, k := range []string{"net/ipv6/conf/default/disable_ipv6", "net/ipv6/conf/all/disable_ipv6"} {
			if err := writeSysctl(k, "1"); err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("shapedlink: disabling IPv6 in the %s namespace (%s): %w", ns.role, k, err)
			}
		}
		return nil
	})
}

// buildTopology creates the veth pair(s), sets addresses, MTU and offloads,
// and brings everything up.
func (l *Link) buildTopology(withShaper bool) error {
	keep := l.offloadMode == OffloadKeep
	hs, err := l.server.handle()
	if err != nil {
		return err
	}
	defer hs.Close()
	hc, err := l.client.handle()
	if err != nil {
		return err
	}
	defer hc.Close()

	devs := []topoDev{{l.server, hs, serverDev, serverAddr}, {l.client, hc, clientDev, clientAddr}}

	if withShaper {
		if l.shaperNS, err = newNamespace("shaper"); err != nil {
			return err
		}
		if err := prepareNamespace(l.shaperNS); err != nil {
			return err
		}
		hh, err := l.shaperNS.handle()
		if err != nil {
			return err
		}
		defer hh.Close()
		if err := addVeth(hs, l.server, serverDev, l.shaperNS, shaperSideSrv); err != nil {
			return err
		}
		if err := addVeth(hc, l.client, clientDev, l.shaperNS, shaperSideCli); err != nil {
			return err
		}
		devs = append(devs, topoDev{l.shaperNS, hh, shaperSideSrv, netip.Addr{}}, topoDev{l.shaperNS, hh, shaperSideCli, netip.Addr{}})
	} else if err := addVeth(hs, l.server, serverDev, l.client, clientDev); err != nil {
		return err
	}

	for _, d := range devs {
		link, err := d.h.LinkByName(d.name)
		if err != nil {
			return fmt.Errorf("shapedlink: finding %s in the %s namespace: %w", d.name, d.ns.role, err)
		}
		if err := d.h.LinkSetMTU(link, linkMTU); err != nil {
			return fmt.Errorf("shapedlink: setting MTU %d on %s: %w", linkMTU, d.name, err)
		}
		if keep && withShaper && d.addr.IsValid() {
			// The ends' stacks segment in software what the emulator
			// could not cut, so it judges every wire segment.
			if err := featuresOff(d.ns, d.name, uncutSegmentation); err != nil {
				return err
			}
			if !vnetCarriesUDPGSO() {
				if err := udpSegmentationOff(d.ns, d.name); err != nil {
					return err
				}
				l.udpSegOff = true
			}
		}
		pin := pinWireSized
		if keep {
			pin = func(ns *Namespace, h *netlink.Handle, dev string) (Offload, error) {
				return readOffload(ns, h, dev, false)
			}
		}
		off, err := pin(d.ns, d.h, d.name)
		if err != nil {
			return err
		}
		l.offload = append(l.offload, off)
		if d.addr.IsValid() {
			a := &netlink.Addr{IPNet: &net.IPNet{IP: d.addr.AsSlice(), Mask: net.CIDRMask(prefixLen, 32)}}
			if err := d.h.AddrAdd(link, a); err != nil {
				return fmt.Errorf("shapedlink: adding %s/%d to %s: %w", d.addr, prefixLen, d.name, err)
			}
		}
		if err := d.h.LinkSetUp(link); err != nil {
			return fmt.Errorf("shapedlink: bringing %s up: %w", d.name, err)
		}
	}
	if err := setNeighbours(devs[0], devs[1]); err != nil {
		return err
	}
	// A device that was just brought up transmits through the noop qdisc,
	// which drops everything, until the kernel's link watcher activates it
	// a moment later; wait for that so the first packet is not lost.
	for _, d := range devs {
		if err := waitActive(d.h, d.name); err != nil {
			return err
		}
	}
	return nil
}

// topoDev is one veth end as the topology configures it: its namespace,
// a netlink handle there, its name and (for the outer ends) its address.
type topoDev struct {
	ns   *Namespace
	h    *netlink.Handle
	name string
	addr netip.Addr
}

// setNeighbours gives the outer ends a and b permanent neighbour entries
// for each other.
func setNeighbours(a, b topoDev) error {
	// No ARP crosses the link: queues and counters hold only the
	// experiment's packets.
	macs := make([]net.HardwareAddr, 2)
	for i, d := range []topoDev{a, b} {
		link, err := d.h.LinkByName(d.name)
		if err != nil {
			return fmt.Errorf("shapedlink: finding %s: %w", d.name, err)
		}
		macs[i] = link.Attrs().HardwareAddr
	}
	for i, d := range []topoDev{a, b} {
		peer := []topoDev{a, b}[1-i]
		link, err := d.h.LinkByName(d.name)
		if err != nil {
			return fmt.Errorf("shapedlink: finding %s: %w", d.name, err)
		}
		n := &netlink.Neigh{LinkIndex: link.Attrs().Index, Family: unix.AF_INET, State: netlink.NUD_PERMANENT,
			IP: peer.addr.AsSlice(), HardwareAddr: macs[1-i]}
		if err := d.h.NeighSet(n); err != nil {
			return fmt.Errorf("shapedlink: adding the neighbour entry %s -> %s on %s: %w", peer.addr, macs[1-i], d.name, err)
		}
	}
	return nil
}

// waitActive waits (up to two seconds) until dev is operationally up and
// its root qdisc is no longer the noop placeholder.
func waitActive(h *netlink.Handle, dev string) error {
	deadline := time.Now().Add(2 * time.Second)
	for {
		link, err := h.LinkByName(dev)
		if err != nil {
			return fmt.Errorf("shapedlink: finding %s: %w", dev, err)
		}
		if link.Attrs().OperState == netlink.OperUp {
			if q, err := rootQdisc(h, link); err == nil && q.Type() != "noop" {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("shapedlink: %s did not become operational within 2s (operstate %s)", dev, link.Attrs().OperState)
		}
		time.Sleep(time.Millisecond)
	}
}

// addVeth creates a veth pair with one end, name, in ns (through h, a
// handle in ns) and the other, peer, directly in peerNS: nothing ever
// appears in the caller's own namespace.
func addVeth(h *netlink.Handle, ns *Namespace, name string, peerNS *Namespace, peer string) error {
	fd, err := peerNS.dupFd()
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	v := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: name, MTU: linkMTU},
		PeerName:      peer,
		PeerMTU:       linkMTU,
		PeerNamespace: netlink.NsFd(fd),
	}
	if err := h.LinkAdd(v); err != nil {
		return fmt.Errorf("shapedlink: creating veth %s (%s namespace) <-> %s (%s namespace): %w", name, ns.role, peer, peerNS.role, err)
	}
	return nil
}
