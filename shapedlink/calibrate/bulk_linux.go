package calibrate

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
	"golang.org/x/sys/unix"
)

// bigBuffers is the socket buffer a bulk flow asks for when it wants large
// buffers (see setSockopts).
const bigBuffers = 32 << 20

// setSockopts pins the congestion control (cc, unless empty) and, when
// bufOpt is SO_RCVBUFFORCE or SO_SNDBUFFORCE, asks for a 32 MiB buffer.
// The forcing options need CAP_NET_ADMIN in the host's user namespace; in
// a user namespace of its own (unprivileged mode) the kernel refuses them,
// and the buffer is asked for with the plain option instead, which the
// host's net.core.rmem_max or wmem_max caps. capped then receives what the
// kernel granted, as getsockopt reports it.
func setSockopts(c syscall.RawConn, cc string, bufOpt int, capped *string) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		if cc != "" {
			if err := unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, cc); err != nil {
				serr = fmt.Errorf("TCP_CONGESTION %q: %w (is tcp_%s loaded?)", cc, err, cc)
				return
			}
		}
		if bufOpt == 0 {
			return
		}
		err := unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, bufOpt, bigBuffers)
		if err == nil || !errors.Is(err, unix.EPERM) {
			if err != nil {
				serr = fmt.Errorf("setting a %d MiB socket buffer: %w", bigBuffers>>20, err)
			}
			return
		}
		plain, name, limit := unix.SO_RCVBUF, "receive", "rmem_max"
		if bufOpt == unix.SO_SNDBUFFORCE {
			plain, name, limit = unix.SO_SNDBUF, "send", "wmem_max"
		}
		if err := unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, plain, bigBuffers); err != nil {
			serr = fmt.Errorf("setting a %d MiB %s buffer without privilege: %w", bigBuffers>>20, name, err)
			return
		}
		got, err := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, plain)
		if err != nil {
			serr = fmt.Errorf("reading the %s buffer size: %w", name, err)
			return
		}
		if capped != nil {
			*capped = fmt.Sprintf("%s %d bytes (net.core.%s)", name, got, limit)
		}
	})
	if err != nil {
		return err
	}
	return serr
}

// bulk runs one TCP flow from server to client for d and returns its
// goodput over the last two thirds.
func bulk(ctx context.Context, l *shapedlink.Link, cc string, big bool, d time.Duration, rate float64) Bulk {
	b := Bulk{CC: cc, Buffers: "default"}
	rcvOpt, sndOpt := 0, 0
	if big {
		b.Buffers = "32MiB"
		rcvOpt, sndOpt = unix.SO_RCVBUFFORCE, unix.SO_SNDBUFFORCE
	}
	fail := func(err error) Bulk { b.Error = err.Error(); return b }
	var ln net.Listener
	// Set only when the 32 MiB buffers could not be forced (see
	// setSockopts); each Control runs before its Listen or Dial returns.
	var rcvCapped, sndCapped string
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error { return setSockopts(c, "", rcvOpt, &rcvCapped) }}
	if err := l.Client().Do(func() (err error) {
		ln, err = lc.Listen(ctx, "tcp4", net.JoinHostPort(l.ClientAddr().String(), "0"))
		return err
	}); err != nil {
		return fail(err)
	}
	defer ln.Close()
	res := make(chan bulkWindow, 1)
	go bulkReceive(l, ln, d, res)
	dialer := net.Dialer{Timeout: 10 * time.Second, Control: func(_, _ string, c syscall.RawConn) error { return setSockopts(c, cc, sndOpt, &sndCapped) }}
	var conn net.Conn
	if err := l.Server().Do(func() (err error) {
		conn, err = dialer.DialContext(ctx, "tcp4", ln.Addr().String())
		return err
	}); err != nil {
		return fail(err)
	}
	defer conn.Close()
	if rcvCapped != "" || sndCapped != "" {
		var got []string
		for _, c := range []string{rcvCapped, sndCapped} {
			if c != "" {
				got = append(got, c)
			}
		}
		b.Buffers = "32MiB refused without host root; granted " + strings.Join(got, ", ")
	}
	// Abort at close: no draining a 32 MiB send buffer into the next test.
	_ = conn.(*net.TCPConn).SetLinger(0)
	go saturate(conn)
	var g bulkWindow
	select {
	case g = <-res:
	case <-ctx.Done():
		return fail(ctx.Err())
	}
	if g.err != nil {
		return fail(g.err)
	}
	if g.dur <= 0 {
		return fail(errors.New("no data arrived after the warm-up"))
	}
	bits := float64(g.bytes*8) / g.dur.Seconds()
	b.GoodputMbit = bits / 1e6
	b.GoodputPct = 100 * bits / rate
	if g.wireOK {
		b.WirePct, b.WireFrom = 100*float64(g.wire*8)/g.dur.Seconds()/rate, "shaper"
	} else {
		b.WirePct, b.WireFrom = b.GoodputPct*fullFrame/fullPayload, "estimate"
	}
	checkWire(&b, maxWirePct(g.dur, rate, g.late))
	return b
}

// bulkWindow is what a bulk flow's receiving end counted over its window.
type bulkWindow struct {
	bytes, wire int64 // in-order bytes received; bytes the shaper forwarded
	wireOK      bool
	late        time.Duration // the shaper's largest lateness by the window's end
	dur         time.Duration
	err         error
}

// bulkReceive accepts the bulk flow on ln, reads it until the end, and
// sends on res what crossed over the window after the first third of d.
func bulkReceive(l *shapedlink.Link, ln net.Listener, d time.Duration, res chan<- bulkWindow) {
	c, err := ln.Accept()
	if err != nil {
		res <- bulkWindow{err: err}
		return
	}
	defer c.Close()
	tc := c.(*net.TCPConn)
	_ = tc.SetLinger(0)
	go func() {
		buf := make([]byte, 256<<10)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
		}
	}()
	time.Sleep(d / 3)
	b0, err := bytesReceived(tc)
	w0, _, ok0 := forwardedDown(l)
	t0 := time.Now()
	time.Sleep(d - d/3)
	b1, err1 := bytesReceived(tc)
	w1, late, ok1 := forwardedDown(l)
	t1 := time.Now()
	if err == nil {
		err = err1
	}
	res <- bulkWindow{bytes: b1 - b0, wire: w1 - w0, wireOK: ok0 && ok1, late: late, dur: t1.Sub(t0), err: err}
}

// bytesReceived is the receiving kernel's own count of c's in-order bytes
// (tcpi_bytes_received): goodput from it does not depend on when the
// application reads.
func bytesReceived(c *net.TCPConn) (int64, error) {
	rc, err := c.SyscallConn()
	if err != nil {
		return 0, err
	}
	var v int64
	var ierr error
	err = rc.Control(func(fd uintptr) {
		var info *unix.TCPInfo
		info, ierr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO)
		if ierr == nil {
			v = int64(info.Bytes_received)
		}
	})
	if err == nil {
		err = ierr
	}
	return v, err
}

// forwardedDown is what the emulator wrote towards the client so far, the
// bytes that crossed the wire, and the latest it wrote a frame against
// its due time; false with netem.
func forwardedDown(l *shapedlink.Link) (int64, time.Duration, bool) {
	sh, ok := l.Instruments().ShaperStats()
	if !ok || len(sh.Directions) == 0 {
		return 0, 0, false
	}
	d := sh.Directions[0]
	return int64(d.ForwardedBytes), time.Duration(d.MaxLateNanos), true
}

// saturate writes to conn as fast as it takes data, until a write fails.
func saturate(conn net.Conn) {
	buf := make([]byte, 64<<10)
	for {
		if _, err := conn.Write(buf); err != nil {
			return
		}
	}
}
