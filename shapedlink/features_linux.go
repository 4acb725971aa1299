package shapedlink

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"unsafe"

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

// ethtoolRaw issues one ethtool command whose argument is buf (starting
// with the command word) on dev through socket fd.
func ethtoolRaw(fd int, dev string, buf []byte) error {
	var ifr ifreqData
	if len(dev) >= len(ifr.name) {
		return fmt.Errorf("device name %q is too long", dev)
	}
	copy(ifr.name[:], dev)
	ifr.data = unsafe.Pointer(&buf[0])
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	if errno != 0 {
		return errno
	}
	return nil
}

// featureIndex is the bit of the named feature in dev's feature words.
func featureIndex(fd int, dev, name string) (int, error) {
	info := make([]byte, 4+4+8+4) // cmd, reserved, sset_mask, data[1]
	binary.NativeEndian.PutUint32(info, ethtoolGSSETInfo)
	binary.NativeEndian.PutUint64(info[8:], 1<<ethSSFeatures)
	if err := ethtoolRaw(fd, dev, info); err != nil {
		return 0, fmt.Errorf("ethtool string set info of %s: %w", dev, err)
	}
	n := int(binary.NativeEndian.Uint32(info[16:]))
	if n <= 0 || n > 1024 {
		return 0, fmt.Errorf("ethtool reports %d features on %s", n, dev)
	}
	strs := make([]byte, 12+n*ethGStringLen) // cmd, string_set, len, data
	binary.NativeEndian.PutUint32(strs, ethtoolGStrings)
	binary.NativeEndian.PutUint32(strs[4:], ethSSFeatures)
	binary.NativeEndian.PutUint32(strs[8:], uint32(n))
	if err := ethtoolRaw(fd, dev, strs); err != nil {
		return 0, fmt.Errorf("ethtool feature names of %s: %w", dev, err)
	}
	for i := range n {
		s := strs[12+i*ethGStringLen : 12+(i+1)*ethGStringLen]
		if string(bytes.TrimRight(s, "\x00")) == name {
			return i, nil
		}
	}
	return 0, fmt.Errorf("%s has no feature %q", dev, name)
}

// setFeature turns the named feature of dev on or off and reads back
// whether it is active.
func setFeature(fd int, dev, name string, on bool) (active bool, err error) {
	i, err := featureIndex(fd, dev, name)
	if err != nil {
		return false, err
	}
	words := i/32 + 1
	set := make([]byte, 8+words*8) // cmd, size, {valid, requested}[size]
	binary.NativeEndian.PutUint32(set, ethtoolSFeatures)
	binary.NativeEndian.PutUint32(set[4:], uint32(words))
	blk := set[8+(i/32)*8:]
	binary.NativeEndian.PutUint32(blk, 1<<(i%32))
	if on {
		binary.NativeEndian.PutUint32(blk[4:], 1<<(i%32))
	}
	if err := ethtoolRaw(fd, dev, set); err != nil {
		return false, fmt.Errorf("ethtool %s %s on %s: %w", name, onOff(on), dev, err)
	}
	get := make([]byte, 8+words*16) // cmd, size, {available, requested, active, never_changed}[size]
	binary.NativeEndian.PutUint32(get, ethtoolGFeatures)
	binary.NativeEndian.PutUint32(get[4:], uint32(words))
	if err := ethtoolRaw(fd, dev, get); err != nil {
		return false, fmt.Errorf("ethtool features of %s: %w", dev, err)
	}
	act := binary.NativeEndian.Uint32(get[8+(i/32)*16+8:])
	return act&(1<<(i%32)) != 0, nil
}

// vnetCarriesUDPGSO reports whether this kernel can describe a UDP
// segmentation-offload super-packet (SKB_GSO_UDP_L4) in the virtio-net
// header a packet socket reads: VIRTIO_NET_HDR_GSO_UDP_L4 arrived in
// Linux 6.2. Before it, reading such a frame fails (EINVAL) and the frame
// is dropped, so a link keeping offloads turns UDP segmentation offload
// off at its ends and lets their stacks segment UDP in software.
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
	return ns.Do(func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("shapedlink: opening an ethtool socket: %w", err)
		}
		defer unix.Close(fd)
		on, err := setFeature(fd, dev, "tx-udp-segmentation", false)
		if err != nil {
			return fmt.Errorf("shapedlink: %w", err)
		}
		if on {
			return fmt.Errorf("shapedlink: tx-udp-segmentation stayed on on %s", dev)
		}
		return nil
	})
}
