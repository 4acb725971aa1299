package calibrate

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"time"
	"unsafe"

	"github.com/shakenfist/quicbench/shapedlink"
	"golang.org/x/sys/unix"
)

// pingPayload is ping's default payload; with the ICMP, IPv4 and Ethernet
// headers the frame is pingFrame bytes each way.
const (
	pingPayload = 56
	pingFrame   = pingPayload + 8 + 20 + 14
)

// pings measures the link's own round trip: n ICMP echo requests from the
// client namespace to addr, one every interval, answered by the server
// namespace's kernel (no process is woken to answer). Each round trip runs
// from the moment just before the request is handed to the kernel to the
// kernel's receive timestamp of the reply (SO_TIMESTAMPNS), so the
// measuring process's own wake-up is not in it either: what remains is
// the path, the machine's handling of it, and the shaping. It returns the
// round trips of the answered requests and how many were sent.
func pings(ctx context.Context, from *shapedlink.Namespace, addr netip.Addr, n int, interval, rtt time.Duration) ([]time.Duration, int, error) {
	var fd int
	err := from.Do(func() (err error) {
		// A raw ICMP socket needs CAP_NET_RAW in the namespace, which
		// root and root of a user namespace have.
		fd, err = unix.Socket(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_ICMP)
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("opening an ICMP socket in the client namespace: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
		return nil, 0, fmt.Errorf("SO_TIMESTAMPNS: %w", err)
	}
	to := &unix.SockaddrInet4{Addr: addr.As4()}
	id := uint16(unix.Getpid())
	sentAt := make([]int64, n) // unix ns, 0 = not sent
	var rtts []time.Duration
	pkt := make([]byte, 8+pingPayload)
	buf := make([]byte, 2048)
	oob := make([]byte, 128)
	// collect reads every reply waiting, without blocking, until deadline.
	collect := func(deadline time.Time) error {
		for {
			wait := time.Until(deadline)
			if wait <= 0 {
				return nil
			}
			fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			ts := unix.NsecToTimespec(int64(wait))
			if k, err := unix.Ppoll(fds, &ts, nil); err != nil && !errors.Is(err, unix.EINTR) {
				return err
			} else if k == 0 {
				continue
			}
			for {
				m, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, unix.MSG_DONTWAIT)
				if errors.Is(err, unix.EAGAIN) {
					break
				}
				if err != nil {
					return err
				}
				seq, stamp, ok := parseReply(buf[:m], oob[:oobn], id)
				if ok && int(seq) < n && sentAt[seq] != 0 {
					rtts = append(rtts, time.Duration(stamp-sentAt[seq]))
					sentAt[seq] = 0 // a duplicate is not a second sample
				}
			}
		}
	}
	start := time.Now()
	sent := 0
	for i := 0; i < n; i++ {
		if err := ctx.Err(); err != nil {
			return rtts, sent, err
		}
		if err := collect(start.Add(time.Duration(i) * interval)); err != nil {
			return rtts, sent, err
		}
		clear(pkt)
		pkt[0] = 8 // echo request
		binary.BigEndian.PutUint16(pkt[4:], id)
		binary.BigEndian.PutUint16(pkt[6:], uint16(i))
		binary.BigEndian.PutUint16(pkt[2:], icmpChecksum(pkt))
		sentAt[i] = time.Now().UnixNano()
		if err := unix.Sendto(fd, pkt, 0, to); err != nil {
			return rtts, sent, fmt.Errorf("sending an ICMP echo request: %w", err)
		}
		sent++
	}
	err = collect(time.Now().Add(rtt + 500*time.Millisecond))
	return rtts, sent, err
}

// parseReply reads an echo reply with identifier id from a raw ICMP
// socket's datagram (IPv4 header included) and its control messages, and
// returns its sequence number and kernel receive timestamp (unix ns).
func parseReply(b, oob []byte, id uint16) (seq uint16, stamp int64, ok bool) {
	if len(b) < 20 {
		return 0, 0, false
	}
	ihl := int(b[0]&0x0f) * 4
	if len(b) < ihl+8 || b[ihl] != 0 || binary.BigEndian.Uint16(b[ihl+4:]) != id {
		return 0, 0, false
	}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return 0, 0, false
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SO_TIMESTAMPNS && len(m.Data) >= int(unsafe.Sizeof(unix.Timespec{})) {
			ts := (*unix.Timespec)(unsafe.Pointer(&m.Data[0]))
			return binary.BigEndian.Uint16(b[ihl+6:]), ts.Nano(), true
		}
	}
	return 0, 0, false
}
