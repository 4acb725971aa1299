package shapedlink

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ethtoolValue is struct ethtool_value.
type ethtoolValue struct {
	cmd  uint32
	data uint32
}

// ifreqData is struct ifreq with the ifr_data member of the union.
type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [24 - unsafe.Sizeof(uintptr(0))]byte
}

// ethtool issues one legacy ETHTOOL_[GS]* value command on dev through
// socket fd, which must be in the device's namespace.
func ethtool(fd int, dev string, cmd, data uint32) (uint32, error) {
	var ifr ifreqData
	if len(dev) >= len(ifr.name) {
		return 0, fmt.Errorf("device name %q is too long", dev)
	}
	copy(ifr.name[:], dev)
	v := ethtoolValue{cmd: cmd, data: data}
	ifr.data = unsafe.Pointer(&v)
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	if errno != 0 {
		return 0, errno
	}
	return v.data, nil
}

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
