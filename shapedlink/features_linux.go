package shapedlink

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// The generic ethtool feature commands (include/uapi/linux/ethtool.h),
// for features the legacy commands do not reach, such as
// tx-udp-segmentation.
const (
	ethtoolGSSETInfo = 0x37 // ETHTOOL_GSSET_INFO
	ethtoolGStrings  = 0x1b // ETHTOOL_GSTRINGS
	ethtoolGFeatures = 0x3a // ETHTOOL_GFEATURES
	ethtoolSFeatures = 0x3b // ETHTOOL_SFEATURES
	ethSSFeatures    = 4    // ETH_SS_FEATURES
	ethGStringLen    = 32   // ETH_GSTRING_LEN
)

// featureNames lists dev's features by bit, as ethtool names them.
func featureNames(fd int, dev string) ([]string, error) {
	info := make([]byte, 4+4+8+4) // cmd, reserved, sset_mask, data[1]
	binary.NativeEndian.PutUint32(info, ethtoolGSSETInfo)
	binary.NativeEndian.PutUint64(info[8:], 1<<ethSSFeatures)
	if err := ethtoolRaw(fd, dev, info); err != nil {
		return nil, fmt.Errorf("ethtool string set info of %s: %w", dev, err)
	}
	n := int(binary.NativeEndian.Uint32(info[16:]))
	if n <= 0 || n > 1024 {
		return nil, fmt.Errorf("ethtool reports %d features on %s", n, dev)
	}
	strs := make([]byte, 12+n*ethGStringLen) // cmd, string_set, len, data
	binary.NativeEndian.PutUint32(strs, ethtoolGStrings)
	binary.NativeEndian.PutUint32(strs[4:], ethSSFeatures)
	binary.NativeEndian.PutUint32(strs[8:], uint32(n))
	if err := ethtoolRaw(fd, dev, strs); err != nil {
		return nil, fmt.Errorf("ethtool feature names of %s: %w", dev, err)
	}
	names := make([]string, n)
	for i := range n {
		names[i] = string(bytes.TrimRight(strs[12+i*ethGStringLen:12+(i+1)*ethGStringLen], "\x00"))
	}
	return names, nil
}

// featureIndex is the bit of the named feature in dev's feature words.
func featureIndex(fd int, dev, name string) (int, error) {
	names, err := featureNames(fd, dev)
	if err != nil {
		return 0, err
	}
	if i := slices.Index(names, name); i >= 0 {
		return i, nil
	}
	return 0, fmt.Errorf("%s has no feature %q", dev, name)
}

// activeFeatures returns which of dev's features (by bit, nbits of them)
// are active.
func activeFeatures(fd int, dev string, nbits int) ([]bool, error) {
	words := (nbits + 31) / 32
	get := make([]byte, 8+words*16) // cmd, size, {available, requested, active, never_changed}[size]
	binary.NativeEndian.PutUint32(get, ethtoolGFeatures)
	binary.NativeEndian.PutUint32(get[4:], uint32(words))
	if err := ethtoolRaw(fd, dev, get); err != nil {
		return nil, fmt.Errorf("ethtool features of %s: %w", dev, err)
	}
	active := make([]bool, nbits)
	for i := range active {
		active[i] = binary.NativeEndian.Uint32(get[8+(i/32)*16+8:])&(1<<(i%32)) != 0
	}
	return active, nil
}

// setFeatures turns the named features of dev on or off in one request,
// skipping those dev does not have, and returns the named features it
// has that are active when read back.
func setFeatures(fd int, dev string, names []string, on bool) (active []string, err error) {
	all, err := featureNames(fd, dev)
	if err != nil {
		return nil, err
	}
	words := (len(all) + 31) / 32
	set := make([]byte, 8+words*8) // cmd, size, {valid, requested}[size]
	binary.NativeEndian.PutUint32(set, ethtoolSFeatures)
	binary.NativeEndian.PutUint32(set[4:], uint32(words))
	var bits []int
	for _, name := range names {
		i := slices.Index(all, name)
		if i < 0 {
			continue
		}
		bits = append(bits, i)
		blk := set[8+(i/32)*8:]
		binary.NativeEndian.PutUint32(blk, binary.NativeEndian.Uint32(blk)|1<<(i%32))
		if on {
			binary.NativeEndian.PutUint32(blk[4:], binary.NativeEndian.Uint32(blk[4:])|1<<(i%32))
		}
	}
	if len(bits) == 0 {
		return nil, nil
	}
	// A feature the driver cannot change is left as it is (the kernel
	// says so in a positive return, not an error); the read back shows it.
	if err := ethtoolRaw(fd, dev, set); err != nil {
		return nil, fmt.Errorf("ethtool %s %s on %s: %w", strings.Join(names, ", "), onOff(on), dev, err)
	}
	act, err := activeFeatures(fd, dev, len(all))
	if err != nil {
		return nil, err
	}
	for _, i := range bits {
		if act[i] {
			active = append(active, all[i])
		}
	}
	return active, nil
}

// setFeature turns the named feature of dev on or off and reads back
// whether it is active.
func setFeature(fd int, dev, name string, on bool) (active bool, err error) {
	if _, err := featureIndex(fd, dev, name); err != nil {
		return false, err
	}
	act, err := setFeatures(fd, dev, []string{name}, on)
	return len(act) > 0, err
}

// uncutSegmentation are the segmentation offloads whose super-packets
// package segment cannot cut; a link keeping offloads turns them off.
var uncutSegmentation = []string{
	"tx-udp_tnl-segmentation", "tx-udp_tnl-csum-segmentation",
	"tx-gre-segmentation", "tx-gre-csum-segmentation",
	"tx-ipxip4-segmentation", "tx-ipxip6-segmentation",
	"tx-tunnel-remcsum-segmentation", "tx-gso-partial",
	"tx-sctp-segmentation", "tx-esp-segmentation", "tx-gso-list",
}

// segmentationOn returns which of the named features of dev are active
// (those it has).
func segmentationOn(fd int, dev string, names []string) ([]string, error) {
	all, err := featureNames(fd, dev)
	if err != nil {
		return nil, err
	}
	act, err := activeFeatures(fd, dev, len(all))
	if err != nil {
		return nil, err
	}
	var on []string
	for _, name := range names {
		if i := slices.Index(all, name); i >= 0 && act[i] {
			on = append(on, name)
		}
	}
	return on, nil
}

// vnetCarriesUDPGSO reports whether a packet socket's virtio-net header
// can describe a UDP GSO super-packet (VIRTIO_NET_HDR_GSO_UDP_L4, Linux
// 6.2); before, such a frame is dropped as it is read.
func vnetCarriesUDPGSO() bool {
	var uts unix.Utsname
	if err := unix.Uname(&uts); err != nil {
		return false
	}
	var major, minor int
	if _, err := fmt.Sscanf(unix.ByteSliceToString(uts.Release[:]), "%d.%d", &major, &minor); err != nil {
		return false
	}
	return major > 6 || major == 6 && minor >= 2
}

// udpSegmentationOff turns tx-udp-segmentation off on dev in ns and
// checks it is off.
func udpSegmentationOff(ns *Namespace, dev string) error {
	return featuresOff(ns, dev, []string{"tx-udp-segmentation"})
}

// featuresOff turns the named features of dev in ns off (those it has)
// and checks they are off.
func featuresOff(ns *Namespace, dev string, names []string) error {
	return ns.Do(func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("shapedlink: opening an ethtool socket: %w", err)
		}
		defer unix.Close(fd)
		on, err := setFeatures(fd, dev, names, false)
		if err != nil {
			return fmt.Errorf("shapedlink: %w", err)
		}
		if len(on) > 0 {
			return fmt.Errorf("shapedlink: %s stayed on on %s, and a link keeping offloads through the emulator needs it off; use wire-sized packets (leave Options.Offload empty)", strings.Join(on, ", "), dev)
		}
		return nil
	})
}
