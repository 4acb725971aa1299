package shapedlink

import (
	"errors"
	"fmt"
	"os"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Legacy ethtool commands (include/uapi/linux/ethtool.h). They map onto the
// feature flags, so they work on every driver that has those features.
const (
	ethtoolGTXCSUM = 0x16
	ethtoolSTXCSUM = 0x17
	ethtoolGTSO    = 0x1e
	ethtoolSTSO    = 0x1f
	ethtoolGGSO    = 0x23
	ethtoolSGSO    = 0x24
	ethtoolGGRO    = 0x2b
	ethtoolSGRO    = 0x2c
)

// pinWireSized sets GSO max segs 1, GSO max size 1500 and TSO, GSO, GRO
// and tx checksumming off on dev in ns, and fails unless all of it reads
// back so.
func pinWireSized(ns *Namespace, h *netlink.Handle, dev string) (Offload, error) {
	l, err := h.LinkByName(dev)
	if err != nil {
		return Offload{}, fmt.Errorf("shapedlink: finding %s in the %s namespace: %w", dev, ns.role, err)
	}
	if err := h.LinkSetGSOMaxSegs(l, 1); err != nil {
		return Offload{}, fmt.Errorf("shapedlink: setting gso_max_segs 1 on %s: %w", dev, err)
	}
	if err := h.LinkSetGSOMaxSize(l, wireGSOMaxSize); err != nil {
		return Offload{}, fmt.Errorf("shapedlink: setting gso_max_size %d on %s: %w", wireGSOMaxSize, dev, err)
	}
	off, err := readOffload(ns, h, dev, true)
	if err == nil && !off.WireSized() {
		err = fmt.Errorf("shapedlink: offload settings on %s did not stick (%s); qdisc and nftables counts would not be per wire packet", dev, off)
	}
	return off, err
}

// readOffload reads dev's offload settings in ns back, after turning
// TSO, GSO, GRO and tx checksumming off first when off is set.
func readOffload(ns *Namespace, h *netlink.Handle, dev string, off bool) (Offload, error) {
	o := Offload{Namespace: ns.role, Device: dev}
	err := ns.Do(func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("shapedlink: opening an ethtool socket: %w", err)
		}
		defer unix.Close(fd)
		for _, set := range []struct {
			cmd  uint32
			name string
		}{{ethtoolSTSO, "tso"}, {ethtoolSGSO, "gso"}, {ethtoolSGRO, "gro"}, {ethtoolSTXCSUM, "tx-checksumming"}} {
			if !off {
				break
			}
			if _, err := ethtool(fd, dev, set.cmd, 0); err != nil && !errors.Is(err, unix.EOPNOTSUPP) {
				return fmt.Errorf("shapedlink: ethtool %s off on %s: %w", set.name, dev, err)
			}
		}
		for _, get := range []struct {
			cmd uint32
			out *bool
		}{{ethtoolGTSO, &o.TSO}, {ethtoolGGSO, &o.GSO}, {ethtoolGGRO, &o.GRO}, {ethtoolGTXCSUM, &o.TxChecksum}} {
			v, err := ethtool(fd, dev, get.cmd, 0)
			if err != nil {
				return fmt.Errorf("shapedlink: reading ethtool features of %s: %w", dev, err)
			}
			*get.out = v != 0
		}
		on, err := segmentationOn(fd, dev, append([]string{"tx-udp-segmentation"}, uncutSegmentation...))
		if err != nil {
			return fmt.Errorf("shapedlink: reading ethtool features of %s: %w", dev, err)
		}
		o.UDPSegmentation = len(on) > 0 && on[0] == "tx-udp-segmentation"
		if o.UDPSegmentation {
			on = on[1:]
		}
		o.UncutSegmentation = on
		return nil
	})
	if err != nil {
		return Offload{}, err
	}
	l, err := h.LinkByName(dev)
	if err != nil {
		return Offload{}, fmt.Errorf("shapedlink: reading %s back: %w", dev, err)
	}
	a := l.Attrs()
	o.MTU, o.GSOMaxSegs, o.GSOMaxSize = a.MTU, a.GSOMaxSegs, a.GSOMaxSize
	return o, nil
}

// writeSysctl writes value to /proc/sys/<path> as seen from the calling
// thread's network namespace (call it inside Namespace.Do for per-namespace
// keys under net/).
func writeSysctl(path, value string) error {
	return os.WriteFile("/proc/sys/"+path, []byte(value), 0)
}

// readSysctl reads /proc/sys/<path>, trimmed of its trailing newline and
// with tabs turned into spaces.
func readSysctl(path string) (string, error) {
	b, err := os.ReadFile("/proc/sys/" + path)
	if err != nil {
		return "", err
	}
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == ' ') {
		b = b[:len(b)-1]
	}
	for i := range b {
		if b[i] == '\t' {
			b[i] = ' '
		}
	}
	return string(b), nil
}
