package shapedlink

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// needNamespaces skips t unless this process can build links.
func needNamespaces(t testing.TB) {
	t.Helper()
	p, err := currentPrivilege()
	if err != nil {
		t.Skipf("cannot read this process's privileges: %v", err)
	}
	if !p.canBuild() {
		t.Skip("needs root, or a user namespace with CAP_SYS_ADMIN and CAP_NET_ADMIN, to create network namespaces")
	}
}

func testLogger(t testing.TB) *slog.Logger {
	return slog.New(slog.NewTextHandler(tWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type tWriter struct{ t testing.TB }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// newTestLink builds a link for profile text with backend b and closes it
// when t ends.
func newTestLink(t testing.TB, profile string, b Backend) *Link {
	t.Helper()
	needNamespaces(t)
	p, err := ParseProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l, err := New(ctx, p, Options{Backend: b, Logger: testLogger(t), Seed: 42})
	if err != nil {
		t.Fatalf("building a %q link for %s: %v", b, profile, err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return l
}

// udpPair opens a UDP socket in each namespace: srv bound on the server
// address, cli on the client address, and returns them.
func udpPair(t testing.TB, l *Link) (srv, cli *net.UDPConn) {
	t.Helper()
	open := func(ns *Namespace, addr string) *net.UDPConn {
		var c *net.UDPConn
		err := ns.Do(func() error {
			var err error
			c, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(mustAddrPort(addr)))
			return err
		})
		if err != nil {
			t.Fatalf("opening UDP in the %s namespace: %v", ns.Role(), err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	return open(l.Server(), l.ServerAddr().String()+":0"), open(l.Client(), l.ClientAddr().String()+":0")
}

// echoRoundTrip sends one datagram from srv to cli and back, and returns
// the round trip.
func echoRoundTrip(t testing.TB, srv, cli *net.UDPConn, timeout time.Duration) (time.Duration, error) {
	t.Helper()
	start := time.Now()
	if _, err := srv.WriteToUDP([]byte("ping"), cli.LocalAddr().(*net.UDPAddr)); err != nil {
		return 0, err
	}
	buf := make([]byte, 64)
	cli.SetReadDeadline(time.Now().Add(timeout))
	n, from, err := cli.ReadFromUDP(buf)
	if err != nil {
		return 0, fmt.Errorf("client did not receive: %w", err)
	}
	if _, err := cli.WriteToUDP(buf[:n], from); err != nil {
		return 0, err
	}
	srv.SetReadDeadline(time.Now().Add(timeout))
	if _, _, err := srv.ReadFromUDP(buf); err != nil {
		return 0, fmt.Errorf("server did not receive the echo: %w", err)
	}
	return time.Since(start), nil
}

// tcpExchange connects from the client namespace to a listener in the
// server namespace and moves a few bytes each way.
func tcpExchange(t testing.TB, l *Link) error {
	t.Helper()
	var ln net.Listener
	if err := l.Server().Do(func() error {
		var err error
		ln, err = net.Listen("tcp4", l.ServerAddr().String()+":0")
		return err
	}); err != nil {
		return err
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		io.Copy(c, c)
	}()
	var c net.Conn
	if err := l.Client().Do(func() error {
		var err error
		c, err = net.DialTimeout("tcp4", ln.Addr().String(), 5*time.Second)
		return err
	}); err != nil {
		return fmt.Errorf("dialling from the client namespace: %w", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	msg := []byte("hello over the shaped link")
	if _, err := c.Write(msg); err != nil {
		return err
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		return err
	}
	if string(got) != string(msg) {
		return fmt.Errorf("echo = %q, want %q", got, msg)
	}
	return nil
}

func checkOffload(t testing.TB, l *Link, want int) {
	t.Helper()
	offs := l.Instruments().Offload()
	if len(offs) != want {
		t.Errorf("Offload() has %d ends, want %d: %v", len(offs), want, offs)
	}
	for _, o := range offs {
		t.Logf("offload %s", o)
		if o.GSOMaxSegs != 1 || o.GSOMaxSize != 1500 || o.TSO || o.GSO || o.GRO || o.TxChecksum || o.MTU != 1500 {
			t.Errorf("offload not pinned on %s", o)
		}
	}
}

func TestLinkUnshaped(t *testing.T) {
	l := newTestLink(t, "80:10", BackendNone)
	checkOffload(t, l, 2)
	srv, cli := udpPair(t, l)
	rtt, err := echoRoundTrip(t, srv, cli, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if rtt > 50*time.Millisecond {
		t.Errorf("unshaped round trip %v, want well under the profile's 80 ms", rtt)
	}
	if err := tcpExchange(t, l); err != nil {
		t.Fatal(err)
	}
}

func TestLinkEmulator(t *testing.T) {
	l := newTestLink(t, "20:10", BackendEmulator)
	if l.Backend() != BackendEmulator || l.Instruments().EmulatorPID() == 0 {
		t.Fatalf("backend %q, shaper pid %d", l.Backend(), l.Instruments().EmulatorPID())
	}
	checkOffload(t, l, 4)
	a := l.Applied()
	if len(a) != 2 || !strings.Contains(a[0], "delay 10ms") || !strings.Contains(a[0], "limit") || strings.Contains(a[0], "loss") {
		t.Errorf("Applied() = %q, want two lines with delay 10ms, a limit and no loss term", a)
	}
	checkShaperBuffers(t, l)
	srv, cli := udpPair(t, l)
	var best time.Duration
	for i := 0; i < 5; i++ {
		rtt, err := echoRoundTrip(t, srv, cli, 2*time.Second)
		if err != nil {
			st := l.shaper.(*emuShaper).mon.Snapshot()
			t.Fatalf("%v; emulator server->client %+v, client->server %+v", err, st[0], st[1])
		}
		if best == 0 || rtt < best {
			best = rtt
		}
	}
	t.Logf("best UDP round trip %v over a 20 ms profile", best)
	if best < 20*time.Millisecond || best > 40*time.Millisecond {
		t.Errorf("round trip %v, want about 20 ms", best)
	}
	if err := tcpExchange(t, l); err != nil {
		t.Fatal(err)
	}
}

func TestNetemBackend(t *testing.T) {
	needNamespaces(t)
	p, _ := ParseProfile("80:10:1")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l, err := New(ctx, p, Options{Backend: BackendNetem, Logger: testLogger(t)})
	if errors.Is(err, ErrNoNetem) {
		if !strings.Contains(err.Error(), "emulator") {
			t.Errorf("missing-netem error %q does not name the emulator backend", err)
		}
		t.Logf("kernel without netem: %v", err)
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	a := l.Applied()
	for _, line := range a {
		if !strings.Contains(line, "netem limit 110 delay 40ms loss 1% rate 10Mbit") {
			t.Errorf("applied %q, want netem limit 110 delay 40ms loss 1%% rate 10Mbit", line)
		}
	}
	if len(a) != 2 {
		t.Errorf("Applied() = %q, want two lines", a)
	}
	srv, cli := udpPair(t, l)
	if _, err := echoRoundTrip(t, srv, cli, 3*time.Second); err != nil {
		// 1% loss each way: retry once before failing.
		if _, err := echoRoundTrip(t, srv, cli, 3*time.Second); err != nil {
			t.Fatal(err)
		}
	}
}

func mustAddrPort(s string) (ap netipAddrPort) {
	ap, err := parseAddrPort(s)
	if err != nil {
		panic(err)
	}
	return ap
}

type netipAddrPort = netip.AddrPort

var parseAddrPort = netip.ParseAddrPort

// TestTwoLinks builds two links side by side in one process: the fixed
// device names and addresses live in separate namespaces and must not
// collide, and each link's traffic stays on its own link.
func TestTwoLinks(t *testing.T) {
	a := newTestLink(t, "10:10", BackendEmulator)
	b := newTestLink(t, "30:10", BackendEmulator)
	for _, c := range []struct {
		l   *Link
		min time.Duration
	}{{a, 10 * time.Millisecond}, {b, 30 * time.Millisecond}} {
		srv, cli := udpPair(t, c.l)
		var best time.Duration
		for i := 0; i < 3; i++ {
			rtt, err := echoRoundTrip(t, srv, cli, 2*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if best == 0 || rtt < best {
				best = rtt
			}
		}
		if best < c.min || best > c.min+15*time.Millisecond {
			t.Errorf("best round trip %v on a %v link", best, c.min)
		}
	}
}
