package segment

import (
	"bytes"
	"errors"
	"net"
	"os"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// kernelPair is a veth pair in a network namespace of its own: frames
// written to tx (a packet socket with PACKET_VNET_HDR on one end, whose
// segmentation and checksum offloads are off, so the kernel cuts a
// super-packet itself and fills in every checksum) arrive on rx (a plain
// packet socket on the other end).
type kernelPair struct {
	ns     netns.NsHandle
	tx, rx int
}

// newKernelPair builds it on the calling goroutine's thread, which it
// leaves in the new namespace; the test's cleanup closes everything.
func newKernelPair(t *testing.T) *kernelPair {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root for a network namespace and packet sockets")
	}
	runtime.LockOSThread()
	orig, err := netns.Get()
	if err != nil {
		t.Fatal(err)
	}
	ns, err := netns.New()
	if err != nil {
		runtime.UnlockOSThread()
		t.Skipf("cannot create a network namespace here: %v", err)
	}
	kp := &kernelPair{ns: ns, tx: -1, rx: -1}
	t.Cleanup(func() {
		unix.Close(kp.tx)
		unix.Close(kp.rx)
		netns.Set(orig)
		ns.Close()
		orig.Close()
		// The thread was in another namespace: let it go with the goroutine.
	})
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := h.LinkAdd(&netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "segx", MTU: 1500}, PeerName: "segy"}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"segx", "segy"} {
		l, err := h.LinkByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.LinkSetUp(l); err != nil {
			t.Fatal(err)
		}
	}
	x, _ := net.InterfaceByName("segx")
	y, _ := net.InterfaceByName("segy")
	// segx's offloads off: the kernel segments and checksums in software.
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []uint32{0x1f /* ETHTOOL_STSO */, 0x24 /* ETHTOOL_SGSO */, 0x17 /* ETHTOOL_STXCSUM */, 0x2c /* ETHTOOL_SSG */} {
		if err := ethtoolSet(fd, "segx", cmd, 0); err != nil && !errors.Is(err, unix.EOPNOTSUPP) {
			t.Fatalf("ethtool %#x on segx: %v", cmd, err)
		}
	}
	unix.Close(fd)
	if kp.tx, err = packetSocket(x.Index, true); err != nil {
		t.Fatal(err)
	}
	if kp.rx, err = packetSocket(y.Index, false); err != nil {
		t.Fatal(err)
	}
	// Wait until segx transmits (its qdisc is no longer the noop one).
	time.Sleep(50 * time.Millisecond)
	return kp
}

func ethtoolSet(fd int, dev string, cmd, data uint32) error {
	var ifr [40]byte
	copy(ifr[:16], dev)
	val := [2]uint32{cmd, data}
	*(*uintptr)(unsafe.Pointer(&ifr[16])) = uintptr(unsafe.Pointer(&val[0]))
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr[0])))
	runtime.KeepAlive(&val)
	if errno != 0 {
		return errno
	}
	return nil
}

func packetSocket(ifindex int, vnet bool) (int, error) {
	proto := uint16(unix.ETH_P_ALL)
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(proto<<8|proto>>8))
	if err != nil {
		return -1, err
	}
	if vnet {
		if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_VNET_HDR, 1); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: proto<<8 | proto>>8, Ifindex: ifindex}); err != nil {
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// segmentByKernel writes vnet and frame to tx and returns the wire
// frames that arrive on rx (those of the test's own flow).
func (kp *kernelPair) segmentByKernel(t *testing.T, vnet, frame []byte, want int) [][]byte {
	t.Helper()
	if _, err := unix.Writev(kp.tx, [][]byte{vnet, frame}); err != nil {
		t.Fatalf("writing the super-packet: %v", err)
	}
	var out [][]byte
	buf := make([]byte, 9000)
	_ = unix.SetsockoptTimeval(kp.rx, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Usec: 200_000})
	for len(out) < want {
		n, _, err := unix.Recvfrom(kp.rx, buf, 0)
		if err != nil {
			t.Fatalf("%d of %d segments arrived: %v", len(out), want, err)
		}
		if n >= 14 && bytes.Equal(buf[:12], frame[:12]) {
			out = append(out, bytes.Clone(buf[:n]))
		}
	}
	return out
}

// TestRunsMatchKernel: for TCP over IPv4 and IPv6 and for UDP_SEGMENT, a
// super-packet cut by this package gives the wire segments the kernel's
// own segmentation gives, byte for byte: each segment alone (with its
// checksum finished as the kernel finishes it), and every run of several
// written back as a super-packet and cut by the kernel.
func TestRunsMatchKernel(t *testing.T) {
	kp := newKernelPair(t)
	payload := make([]byte, 7*1000+333)
	for i := range payload {
		payload[i] = byte(i*31 + i>>8)
	}
	for _, c := range []struct {
		name      string
		ipv6, udp bool
	}{{"tcp4", false, false}, {"tcp6", true, false}, {"udp4", false, true}, {"udp6", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			vnet, frame := superPacket(c.ipv6, c.udp, payload, 1000)
			f, err := Parse(vnet, frame)
			if err != nil {
				t.Fatal(err)
			}
			if f.Segments() != 8 {
				t.Fatalf("%d segments, want 8", f.Segments())
			}
			kernel := kp.segmentByKernel(t, vnet, frame, f.Segments())
			scratch := make([]byte, VnetLen+f.hdr)
			for i := range f.Segments() {
				run := f.Run(i, i, scratch)
				got := append(bytes.Clone(run[VnetLen:]), f.Payload(i, i)...)
				complete(run[:VnetLen], got)
				if len(got) != f.SegLen(i) {
					t.Errorf("segment %d: %d bytes, SegLen says %d", i, len(got), f.SegLen(i))
				}
				if !bytes.Equal(got, kernel[i]) {
					t.Fatalf("segment %d differs from the kernel's:\n%s", i, diff(got, kernel[i]))
				}
			}
			for first := range f.Segments() {
				for last := first + 1; last < f.Segments(); last += 2 {
					run := f.Run(first, last, scratch)
					back := kp.segmentByKernel(t, run[:VnetLen], append(bytes.Clone(run[VnetLen:]), f.Payload(first, last)...), last-first+1)
					for k, seg := range back {
						if !bytes.Equal(seg, kernel[first+k]) {
							t.Fatalf("run %d-%d cut by the kernel: segment %d differs from the kernel's cut of the whole:\n%s", first, last, first+k, diff(seg, kernel[first+k]))
						}
					}
				}
			}
		})
	}
}
