package vmtest

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// listenUDP opens a UDP socket bound to the end's address and port inside
// the end's namespace, with large buffers so that the socket itself drops
// nothing the tests count.
func listenUDP(l vmLink, e end, port int) (*net.UDPConn, error) {
	var c *net.UDPConn
	err := l.Do(e, func() error {
		var err error
		c, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(l.Addr(e), uint16(port))))
		if err != nil {
			return err
		}
		return bigBuffers(c)
	})
	return c, err
}

// bigBuffers gives c 8 MiB socket buffers, past net.core.rmem_max and
// wmem_max with SO_RCVBUFFORCE and SO_SNDBUFFORCE (the tests run as root),
// so that a receiver the emulated CPU schedules late still drops nothing.
func bigBuffers(c *net.UDPConn) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = raw.Control(func(fd uintptr) {
		for _, opt := range []int{unix.SO_RCVBUFFORCE, unix.SO_SNDBUFFORCE} {
			if e := unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, opt, 8<<20); e != nil && serr == nil {
				serr = fmt.Errorf("setsockopt %d: %w", opt, e)
			}
		}
	})
	if err != nil {
		return err
	}
	return serr
}

// dialUDP opens a UDP socket in from's namespace connected to to's address.
func dialUDP(l vmLink, from, to end, port int) (*net.UDPConn, error) {
	var c *net.UDPConn
	err := l.Do(from, func() error {
		var err error
		c, err = net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(netip.AddrPortFrom(l.Addr(to), uint16(port))))
		if err != nil {
			return err
		}
		return bigBuffers(c)
	})
	return c, err
}

// counter counts datagrams arriving on c until stopped.
type counter struct {
	mu sync.Mutex
	n  int
	r  *reader
}

func countUDP(c *net.UDPConn) *counter {
	k := &counter{}
	k.r = readUDP(c, func([]byte, time.Time) {
		k.mu.Lock()
		k.n++
		k.mu.Unlock()
	})
	return k
}

// stop stops the reader (see reader.stop) and returns the count.
func (k *counter) stop() int {
	k.r.stop()
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.n
}

// netemStats reads the root netem qdisc of the end's device: its
// configuration as the kernel reports it and its counters.
func netemStats(l vmLink, e end) (*netlink.Netem, netlink.GnetStatsQueue, error) {
	var n *netlink.Netem
	var q netlink.GnetStatsQueue
	err := l.Do(e, func() error {
		link, err := netlink.LinkByName(l.Dev(e))
		if err != nil {
			return err
		}
		qs, err := netlink.QdiscList(link)
		if err != nil {
			return err
		}
		for _, qd := range qs {
			if qd.Attrs().Parent != netlink.HANDLE_ROOT {
				continue
			}
			nq, ok := qd.(*netlink.Netem)
			if !ok {
				return fmt.Errorf("root qdisc of %s is %s, not netem", l.Dev(e), qd.Type())
			}
			n = nq
			if s := qd.Attrs().Statistics; s != nil && s.Queue != nil {
				q = *s.Queue
			}
			return nil
		}
		return fmt.Errorf("%s has no root qdisc", l.Dev(e))
	})
	return n, q, err
}

// ticksPerMicrosecond reads the kernel's packet scheduler clock from /proc/net/psched
// (as tc does): how many scheduler ticks make a microsecond.
func ticksPerMicrosecond() (float64, error) {
	data, err := os.ReadFile("/proc/net/psched")
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return 0, fmt.Errorf("/proc/net/psched has %d fields, want 4: %q", len(f), data)
	}
	var v [3]uint64
	for i := range v {
		if v[i], err = strconv.ParseUint(f[i], 16, 64); err != nil {
			return 0, fmt.Errorf("/proc/net/psched field %d: %w", i, err)
		}
	}
	// tc's rule (lib/utils.c): tick_in_usec = t2us/us2t * clock_res/10^6,
	// with t2us replaced by us2t when clock_res is 10^9.
	if v[1] == 0 {
		return 0, errors.New("/proc/net/psched: us2t is zero")
	}
	clockRes := v[2]
	if clockRes == 1_000_000_000 {
		// tc's compatibility rule for this clock resolution.
		v[0] = v[1]
	}
	return float64(v[0]) / float64(v[1]) * float64(clockRes) / 1e6, nil
}

// percentile returns the nearest-rank p-th percentile of d (0 < p <= 100).
func percentile(d []time.Duration, p float64) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := int(float64(len(s))*p/100 + 0.999999)
	if rank < 1 {
		rank = 1
	}
	return s[rank-1]
}

// udpRcvbufErrors reads the UDP receive-buffer drop counter (RcvbufErrors in
// /proc/net/snmp) of the end's namespace: datagrams that crossed the link
// but found the receiving socket's buffer full.
func udpRcvbufErrors(l vmLink, e end) (uint64, error) {
	var n uint64
	err := l.Do(e, func() error {
		// thread-self: /proc/self/net would show the namespace of the
		// process's main thread, not of this one.
		data, err := os.ReadFile("/proc/thread-self/net/snmp")
		if err != nil {
			return err
		}
		var names []string
		for _, line := range strings.Split(string(data), "\n") {
			if !strings.HasPrefix(line, "Udp: ") {
				continue
			}
			f := strings.Fields(line)[1:]
			if names == nil {
				names = f
				continue
			}
			for i, name := range names {
				if name == "RcvbufErrors" && i < len(f) {
					n, err = strconv.ParseUint(f[i], 10, 64)
					return err
				}
			}
		}
		return errors.New("no Udp RcvbufErrors in /proc/thread-self/net/snmp")
	})
	return n, err
}
