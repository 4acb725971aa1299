package shapedlink

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// newInProcessLink builds an in-process link of profile for the test and
// closes it when the test ends.
func newInProcessLink(t *testing.T, profile string, opts Options) *Link {
	t.Helper()
	p, err := ParseProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	opts.Backend = BackendInProcess
	l, err := New(context.Background(), p, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// TestInProcessLink: the in-process backend is a Link like the others:
// its ends make UDP sockets that cross the shaped link, its record says
// what applies (the backend, the mode, the applied lines with seeds, the
// counters), and whatever needs a namespace is refused with
// errors.ErrUnsupported and a reason.
func TestInProcessLink(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var trace []string
		l := newInProcessLink(t, "80:10", Options{Seed: 5, PacketTrace: func(e PacketEvent) {
			mu.Lock()
			trace = append(trace, e.String())
			mu.Unlock()
		}})
		if l.Backend() != BackendInProcess || l.Mode() != ModeInProcess || l.Err() != nil {
			t.Fatalf("backend %q mode %q err %v", l.Backend(), l.Mode(), l.Err())
		}
		a := l.Applied()
		if len(a) != 2 || a[0] != "server -> client: inproc delay 40ms rate 10Mbit limit 110 seed 5" ||
			!strings.HasPrefix(a[1], "client -> server: inproc delay 40ms rate 10Mbit limit 110 seed ") {
			t.Errorf("Applied() = %q", a)
		}
		ctx := context.Background()
		srv, err := l.Server().ListenPacket(ctx, "udp", l.ServerAddr().String()+":4433")
		if err != nil {
			t.Fatal(err)
		}
		cli, err := l.Client().ListenPacket(ctx, "udp", ":0")
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if _, err := cli.WriteTo([]byte("ping"), srv.LocalAddr()); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64)
		n, from, err := srv.ReadFrom(buf)
		if err != nil || string(buf[:n]) != "ping" || from.String() != "198.18.0.2:32768" {
			t.Fatalf("read %q from %v: %v", buf[:n], from, err)
		}
		if took, want := time.Since(start), 40*time.Millisecond+46*8*time.Second/10e6; took != want {
			t.Errorf("the datagram took %v, want %v", took, want)
		}
		st, ok := l.Instruments().ShaperStats()
		if !ok || len(st.Directions) != 2 || st.Directions[1].Forwarded != 1 || st.Directions[1].ForwardedBytes != 46 || st.Directions[1].Unstamped != 0 {
			t.Errorf("ShaperStats() = %+v, %v; want one 46-byte frame forwarded client->server", st, ok)
		}
		hs, err := l.Instruments().HostState()
		if err != nil || hs.Backend != BackendInProcess || hs.Mode != ModeInProcess || hs.EmulatorSeeds[0] != 5 ||
			hs.EmulatorSeeds[1] != backSeed(5) || hs.TCPCongestionControl != "" || len(hs.Applied) != 2 {
			t.Errorf("HostState() = %+v, %v", hs, err)
		}
		s, err := l.Instruments().Sampler(ServerEnd)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Poll(); err != nil {
			t.Errorf("Poll: %v", err)
		}
		mu.Lock()
		if got := strings.Join(trace, "\n"); got != "0s up #1 46B accepted due 40.0368ms\n40.0368ms up #1 46B delivered" {
			t.Errorf("trace:\n%s", got)
		}
		mu.Unlock()
		if addrs, err := l.Control().ClientAddrs(); err != nil || len(addrs) != 1 || addrs[0] != l.ClientAddr() {
			t.Errorf("ClientAddrs() = %v, %v", addrs, err)
		}
		if d := l.Instruments().Device(ServerEnd); d != "" || l.Instruments().Offload() != nil {
			t.Errorf("Device %q, offload %v: the in-process link has no veths", d, l.Instruments().Offload())
		}
	})
}

// TestInProcessRefusals: what needs a namespace, a stream or a veth is
// refused, each error wrapping errors.ErrUnsupported and saying what to
// use instead.
func TestInProcessRefusals(t *testing.T) {
	l := newInProcessLink(t, "80:10", Options{})
	ctx := context.Background()
	_, listenErr := l.Server().Listen(ctx, "tcp", ":0")
	_, dialErr := l.Client().DialContext(ctx, "tcp", "198.18.0.1:80")
	_, inodeErr := l.Server().Inode()
	_, egressErr := l.Instruments().EgressCounters(ClientEnd)
	_, blockErr := l.Control().BlockUDP(ServerEnd)
	_, dropErr := l.Control().DropRandom(ServerEnd, 1)
	_, addErr := l.Control().AddClientAddr(ctx)
	for name, err := range map[string]error{
		"Listen":           listenErr,
		"DialContext":      dialErr,
		"Do":               l.Client().Do(func() error { t.Error("Do ran fn"); return nil }),
		"Start":            l.Server().Start(exec.Command("true")),
		"Inode":            inodeErr,
		"EgressCounters":   egressErr,
		"BlockUDP":         blockErr,
		"DropRandom":       dropErr,
		"AddClientAddr":    addErr,
		"RemoveClientAddr": l.Control().RemoveClientAddr(l.ClientAddr()),
	} {
		if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), name) ||
			!strings.Contains(err.Error(), "carries datagrams only") {
			t.Errorf("%s: %v; want an error naming it, saying the link carries datagrams only, wrapping errors.ErrUnsupported", name, err)
		}
	}
	if s := l.Server().String(); s != "server (in process)" {
		t.Errorf("String() = %q", s)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Server().ListenPacket(ctx, "udp", ":0"); err == nil {
		t.Error("ListenPacket after Close succeeded")
	}
	if err := l.Err(); err == nil {
		t.Error("Err() after Close is nil")
	}
}

// TestInProcessOptions: the options that mean nothing to a backend are
// refused rather than ignored.
func TestInProcessOptions(t *testing.T) {
	p, err := ParseProfile("80:10")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	trace := func(PacketEvent) {}
	for _, c := range []struct {
		opts Options
		says string
	}{
		{Options{Backend: BackendInProcess, Mode: ModeRoot}, "needs no privilege"},
		{Options{Backend: BackendEmulator, PacketTrace: trace}, "PacketTrace is for the \"inproc\" backend"},
		{Options{PacketTrace: trace}, "PacketTrace is for the \"inproc\" backend"},
		{Options{Backend: "sim"}, "\"inproc\" (in this process, datagrams only)"},
	} {
		if l, err := New(ctx, p, c.opts); err == nil || !strings.Contains(err.Error(), c.says) {
			if l != nil {
				_ = l.Close()
			}
			t.Errorf("New(%+v) = %v, want an error saying %q", c.opts, err, c.says)
		}
	}
}

// TestInProcessSockets: sockets at one end reach the other's by port,
// and only there.
func TestInProcessSockets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newInProcessLink(t, "10:100", Options{})
		ctx := context.Background()
		var srv [2]net.PacketConn
		for i := range srv {
			c, err := l.Server().ListenPacket(ctx, "udp4", ":0")
			if err != nil {
				t.Fatal(err)
			}
			srv[i] = c
		}
		cli, err := l.Client().ListenPacket(ctx, "udp", ":0")
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range srv {
			if _, err := cli.WriteTo([]byte{byte(i)}, c.LocalAddr()); err != nil {
				t.Fatal(err)
			}
		}
		for i, c := range srv {
			buf := make([]byte, 8)
			n, _, err := c.ReadFrom(buf)
			if err != nil || n != 1 || buf[0] != byte(i) {
				t.Errorf("socket %d read %v (%v), want its own datagram %d", i, buf[:n], err, i)
			}
		}
		if _, err := l.Server().ListenPacket(ctx, "udp6", ":0"); err == nil || !strings.Contains(err.Error(), "IPv4 only") {
			t.Errorf("udp6: %v", err)
		}
	})
}
