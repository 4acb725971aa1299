package vmtest

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
)

// newLinkBackend is newLink for a chosen backend.
func newLinkBackend(t *testing.T, profile string, b shapedlink.Backend) vmLink {
	t.Helper()
	return newLinkOptions(t, profile, shapedlink.Options{Backend: b})
}

// newLinkOptions is newLink with opts (a backend must be chosen).
func newLinkOptions(t *testing.T, profile string, opts shapedlink.Options) vmLink {
	t.Helper()
	b := opts.Backend
	opts.Logger = slog.New(slog.DiscardHandler)
	requireNetem(t)
	p, err := shapedlink.ParseProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	l, err := shapedlink.New(ctx, p, opts)
	if err != nil {
		t.Fatalf("shapedlink.New(%s, %s): %v", profile, b, err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("closing the %s link: %v", b, err)
		}
	})
	if l.Backend() != b {
		t.Fatalf("link built with backend %q, want %q", l.Backend(), b)
	}
	return vmLink{l}
}

// echoRTTs measures n one-at-a-time 64-byte UDP echoes from the client to
// the server, 10 ms apart. An echo lost on a lossy link is retried after a
// timeout and not counted.
func echoRTTs(t *testing.T, l vmLink, port, n int, timeout time.Duration) []time.Duration {
	t.Helper()
	srv, err := listenUDP(l, serverEnd, port)
	if err != nil {
		t.Fatal(err)
	}
	go echoServer(srv)
	defer srv.Close()
	cli, err := dialUDP(l, clientEnd, serverEnd, port)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	var rtts []time.Duration
	msg := make([]byte, 64)
	buf := make([]byte, 2048)
	for seq := 1; len(rtts) < n && seq < 4*n; seq++ {
		msg[0], msg[1] = byte(seq), byte(seq>>8)
		start := time.Now()
		if _, err := cli.Write(msg); err != nil {
			t.Fatal(err)
		}
		_ = cli.SetReadDeadline(start.Add(timeout))
		for {
			m, err := cli.Read(buf)
			if err != nil {
				break // lost: try the next sequence number
			}
			if m == len(msg) && buf[0] == msg[0] && buf[1] == msg[1] {
				rtts = append(rtts, time.Since(start))
				break
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(rtts) < n {
		t.Fatalf("only %d of %d echoes came back", len(rtts), n)
	}
	return rtts
}

// tcpThroughput runs one TCP flow from the server to the client for dur
// (the server writes 64 KiB buffers as fast as the socket takes them) and
// returns the client's goodput in Mbit/s over the part after warm, and the
// congestion control the server's socket used.
func tcpThroughput(t *testing.T, l vmLink, port int, warm, dur time.Duration) (float64, string) {
	t.Helper()
	var ln net.Listener
	if err := l.Do(serverEnd, func() error {
		var err error
		ln, err = net.Listen("tcp4", netip.AddrPortFrom(l.Addr(serverEnd), uint16(port)).String())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cc := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			cc <- "accept: " + err.Error()
			return
		}
		defer c.Close()
		cc <- congestionControl(c)
		buf := make([]byte, 64<<10)
		_ = c.SetWriteDeadline(time.Now().Add(dur + 5*time.Second))
		for {
			if _, err := c.Write(buf); err != nil {
				return
			}
		}
	}()
	var conn net.Conn
	if err := l.Do(clientEnd, func() error {
		var err error
		conn, err = net.DialTimeout("tcp4", netip.AddrPortFrom(l.Addr(serverEnd), uint16(port)).String(), 10*time.Second)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	var counted int64
	buf := make([]byte, 64<<10)
	_ = conn.SetReadDeadline(start.Add(dur))
	for {
		n, err := conn.Read(buf)
		if time.Since(start) > warm {
			counted += int64(n)
		}
		if err != nil {
			if err == io.EOF || strings.Contains(err.Error(), "timeout") {
				break
			}
			t.Fatalf("reading the TCP flow: %v", err)
		}
	}
	return float64(counted*8) / (dur - warm).Seconds() / 1e6, <-cc
}

// congestionControl reads TCP_CONGESTION from a TCP connection.
func congestionControl(c net.Conn) string {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return "?"
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return "?"
	}
	name := "?"
	_ = raw.Control(func(fd uintptr) {
		if s, err := getsockoptString(int(fd)); err == nil {
			name = s
		}
	})
	return name
}

// TestCompareNetemEmulator runs the same slow, lossy profile (150:2:1) on
// kernel netem and on shapedlink's userspace emulator in the same VM and
// prints, side by side, the idle echo RTT and one TCP flow's goodput.
//
// Expected looseness under TCG: the emulator is a userspace process on an
// emulated CPU, so its added delay is larger and noisier than on real
// hardware (where it adds well under a millisecond); and one TCP flow at 1%
// loss and 150 ms has a goodput set by its loss events (the Mathis bound is
// about 0.9 Mbit/s here), which varies run to run by tens of percent. The
// checks are therefore only: both backends' minimum RTT lies between the
// configured 150 ms and 225 ms, and both flows move data at no more
// than the link rate. The table is for a person to read.
func TestCompareNetemEmulator(t *testing.T) {
	const profile = "150:2:1"
	exp, err := expectNetem(profile)
	if err != nil {
		t.Fatal(err)
	}
	rtt := 2 * exp.Delay
	rate := float64(exp.RateBytes*8) / 1e6
	type row struct {
		backend       shapedlink.Backend
		min, p50, p95 time.Duration
		mbit          float64
		cc            string
	}
	var rows []row
	for i, b := range []shapedlink.Backend{shapedlink.BackendNetem, shapedlink.BackendEmulator} {
		l := newLinkBackend(t, profile, b)
		for _, a := range l.Applied() {
			t.Logf("%s applied: %s", b, a)
		}
		rtts := echoRTTs(t, l, 7600+i, 20, rtt+time.Second)
		mbit, cc := tcpThroughput(t, l, 7700+i, 3*time.Second, 10*time.Second)
		rows = append(rows, row{b, percentile(rtts, 0.0001), percentile(rtts, 50), percentile(rtts, 95), mbit, cc})
	}
	var tb strings.Builder
	fmt.Fprintf(&tb, "netem vs emulator on %s (RTT %v, %.0f Mbit/s, 1%% loss each way), under TCG:\n", profile, rtt, rate)
	fmt.Fprintf(&tb, "  %-9s %10s %10s %10s %14s %s\n", "backend", "rtt min", "rtt p50", "rtt p95", "tcp Mbit/s", "cc")
	for _, r := range rows {
		fmt.Fprintf(&tb, "  %-9s %10s %10s %10s %14.3f %s\n", r.backend,
			r.min.Round(100*time.Microsecond), r.p50.Round(100*time.Microsecond), r.p95.Round(100*time.Microsecond), r.mbit, r.cc)
	}
	t.Log(tb.String())
	for _, r := range rows {
		// Up to half the RTT over: a busy host's stalls add to every
		// echo through the emulator's user space (22 ms to the
		// minimum of 20 at a load of 20); a delay applied twice
		// still reads 300 ms.
		if r.min < rtt || r.min > rtt+rtt/2 {
			t.Errorf("%s: minimum RTT %v outside [%v, %v]", r.backend, r.min, rtt, rtt+rtt/2)
		}
		if r.mbit <= 0 || r.mbit > rate*1.02 {
			t.Errorf("%s: TCP goodput %.3f Mbit/s, want above 0 and at most the link rate %.0f", r.backend, r.mbit, rate)
		}
	}
}
