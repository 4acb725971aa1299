package emulator

import (
	"fmt"
	"net"
	"time"
	"unsafe"

	"github.com/shakenfist/quicbench/shapedlink/internal/segment"
	"golang.org/x/sys/unix"
)

// This file holds the shaper's AF_PACKET sockets: opening and binding them
// on an interface, their buffer sizes, the kernel's receive timestamps and
// drop counters. The loop that reads and writes them is in
// forward_linux.go.

// Both sockets carry a virtio_net_hdr in front of each frame
// (PACKET_VNET_HDR). A sender on a veth leaves its checksum to "hardware"
// (CHECKSUM_PARTIAL); the header carries where the checksum goes, and
// writing it back with the frame keeps the frame valid for the receiver.
// Without it every TCP and UDP frame would arrive with a bad checksum.
const vnetHdrLen = segment.VnetLen

const (
	ctlLen   = 64 // room for one SCM_TIMESTAMPNS message
	rxBatch  = 64
	txBatch  = 64
	bigSlot  = 64<<10 + 1024 // any frame a 64 KiB GSO skb could make
	jumbo    = 9216 + 64
	maxArena = 1 << 30
	// maxArenaKeep bounds the buffers of a shaper keeping offloads, where
	// every frame buffer must hold a 64 KiB super-packet. It is address
	// space (MAP_NORESERVE): a page takes memory only once a frame has
	// used it, so what is resident is what the link has held at most.
	maxArenaKeep = 8 << 30
)

func waitRunning(name string, d time.Duration) error {
	end := time.Now().Add(d)
	for {
		ifi, err := net.InterfaceByName(name)
		if err != nil {
			return fmt.Errorf("interface %q in the shaper's network namespace: %w (was the shaper started inside that namespace?)", name, err)
		}
		if ifi.Flags&net.FlagRunning != 0 {
			return nil
		}
		if time.Now().After(end) {
			return fmt.Errorf("interface %q is not up with carrier after %v (flags %v); set it and its veth peer up", name, d, ifi.Flags)
		}
		time.Sleep(time.Millisecond)
	}
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// openInterface opens the receive and the send socket on the interface
// called name; the shaper closes both at teardown.
func (s *shaper) openInterface(name string) (rx, tx int, err error) {
	ifi, err := net.InterfaceByName(name)
	if err != nil {
		return -1, -1, fmt.Errorf("interface %q in the shaper's network namespace: %w (was the shaper started inside that namespace?)", name, err)
	}
	if rx, err = openRx(ifi.Index); err != nil {
		return -1, -1, fmt.Errorf("receive socket on %s: %w", name, err)
	}
	s.fds = append(s.fds, rx)
	if tx, err = openTx(ifi.Index); err != nil {
		return -1, -1, fmt.Errorf("send socket on %s: %w", name, err)
	}
	s.fds = append(s.fds, tx)
	return rx, tx, nil
}

func openRx(ifindex int) (int, error) {
	// Protocol 0 at creation: the socket receives nothing until bind
	// names both the protocol and the interface, so no frame from another
	// interface slips in between.
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket(AF_PACKET): %w (the shaper needs CAP_NET_RAW in its network namespace)", err)
	}
	// Our own writes on this interface (the other direction's output)
	// must not come back to us. Older kernels lack the option; the
	// PACKET_OUTGOING check in recv covers them.
	_ = unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1)
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_VNET_HDR, 1); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("PACKET_VNET_HDR: %w", err)
	}
	// Kernel receive timestamps: a frame's arrival is when it reached the
	// shaper's interface, not when the forwarding thread got round to
	// reading it.
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("SO_TIMESTAMPNS: %w", err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20); err != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 8<<20)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifindex}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("bind: %w", err)
	}
	return fd, nil
}

func openTx(ifindex int) (int, error) {
	// Bound with protocol 0 the socket never receives; the kernel takes
	// the frame's protocol from its Ethernet header.
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket(AF_PACKET): %w (the shaper needs CAP_NET_RAW in its network namespace)", err)
	}
	_ = unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_QDISC_BYPASS, 1)
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_VNET_HDR, 1); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("PACKET_VNET_HDR: %w", err)
	}
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, 8<<20); err != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 8<<20)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Ifindex: ifindex}); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("bind: %w", err)
	}
	return fd, nil
}

// recordBuffers publishes the sizes of the loop's receive buffer and send
// buffer, as the kernel granted them.
func (l *dirLoop) recordBuffers() error {
	rcv, err := unix.GetsockoptInt(l.rx, unix.SOL_SOCKET, unix.SO_RCVBUF)
	if err != nil {
		return fmt.Errorf("reading back SO_RCVBUF: %w", err)
	}
	snd, err := unix.GetsockoptInt(l.tx, unix.SOL_SOCKET, unix.SO_SNDBUF)
	if err != nil {
		return fmt.Errorf("reading back SO_SNDBUF: %w", err)
	}
	l.c.RcvBufBytes, l.c.SndBufBytes = uint64(rcv), uint64(snd)
	l.sh.publish(&l.c)
	return nil
}

func (l *dirLoop) readSocketDrops() {
	st, err := unix.GetsockoptTpacketStats(l.rx, unix.SOL_PACKET, unix.PACKET_STATISTICS)
	if err == nil && st.Drops > 0 { // reading resets the kernel's counters
		l.c.SocketDrops += uint64(st.Drops)
	}
}

// arrival converts frame i's kernel timestamp (CLOCK_REALTIME) to the
// loop's monotonic scale using one simultaneous reading of both clocks. A
// missing timestamp, or one that a wall-clock step has made implausible,
// gives the read time instead; the result is never later than now and
// never earlier than the previous arrival, so the model's clock only moves
// forward.
func (l *dirLoop) arrival(i int, now, real int64) (at int64, stamped bool) {
	a := now
	h := &l.rxHdr[i].Hdr
	if h.Controllen >= unix.SizeofCmsghdr+uint64(unsafe.Sizeof(unix.Timespec{})) {
		c := (*unix.Cmsghdr)(unsafe.Pointer(&l.rxCtl[i*ctlLen]))
		if c.Level == unix.SOL_SOCKET && c.Type == unix.SCM_TIMESTAMPNS {
			ts := (*unix.Timespec)(unsafe.Pointer(&l.rxCtl[i*ctlLen+unix.SizeofCmsghdr]))
			if age := real - ts.Nano(); age >= 0 && age < int64(time.Second) {
				a = now - age
				stamped = true
			}
		}
	}
	if a < l.lastArrival {
		a = l.lastArrival
	}
	l.lastArrival = a
	return a, stamped
}
