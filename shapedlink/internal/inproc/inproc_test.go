package inproc

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

var (
	serverAddr = netip.MustParseAddr("198.18.0.1")
	clientAddr = netip.MustParseAddr("198.18.0.2")
)

// the80x10 is one direction of the profile 80:10: 40 ms, 10 Mbit/s, a
// limit of 110 packets.
func the80x10(seed uint64) linkspec.Direction {
	return linkspec.Direction{Delay: 40 * time.Millisecond, RateMbit: 10, Limit: 110, Seed: seed}
}

// newLink builds a link of dirs and closes it when the test ends.
func newLink(t *testing.T, dirs [2]linkspec.Direction, trace func(Event)) *Link {
	t.Helper()
	l, err := New(Config{Dirs: dirs, Addrs: [2]netip.Addr{serverAddr, clientAddr}, Trace: trace})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	return l
}

// listen binds a socket at end e to port 0.
func listen(t *testing.T, l *Link, e int) net.PacketConn {
	t.Helper()
	c, err := l.ListenPacket(e, "udp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestVirtualTime: in a synctest bubble a datagram arrives exactly when
// the model says, on the bubble's clock: a 100-byte payload (142 bytes on
// the wire) over 80:10 after 40 ms and 142*8 bits at 10 Mbit/s, and one
// written right behind a 1000-byte one after that one's serialisation
// too. A carrier that took its time from anywhere but the time package
// (the wall clock) would deliver at other times.
func TestVirtualTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLink(t, [2]linkspec.Direction{the80x10(1), the80x10(2)}, nil)
		srv, cli := listen(t, l, 0), listen(t, l, 1)
		start := time.Now()
		if _, err := srv.WriteTo(make([]byte, 100), cli.LocalAddr()); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 2048)
		n, from, err := cli.ReadFrom(buf)
		if err != nil {
			t.Fatal(err)
		}
		want := 40*time.Millisecond + 142*8*time.Second/10e6
		if got := time.Since(start); got != want || n != 100 || from.String() != srv.LocalAddr().String() {
			t.Errorf("%d bytes from %v after %v, want 100 from %v after %v", n, from, got, srv.LocalAddr(), want)
		}
		start = time.Now()
		for _, size := range []int{1000, 100} {
			if _, err := srv.WriteTo(make([]byte, size), cli.LocalAddr()); err != nil {
				t.Fatal(err)
			}
		}
		for i, want := range []time.Duration{
			40*time.Millisecond + 1042*8*time.Second/10e6,
			40*time.Millisecond + (1042+142)*8*time.Second/10e6,
		} {
			if _, _, err := cli.ReadFrom(buf); err != nil {
				t.Fatal(err)
			}
			if got := time.Since(start); got != want {
				t.Errorf("back-to-back datagram %d arrived after %v, want %v", i, got, want)
			}
		}
	})
}

// lossy is a lossy, jittery, duplicating, corrupting profile, with
// Gilbert-Elliott loss on the way back.
func lossy(seed uint64) [2]linkspec.Direction {
	down := the80x10(seed)
	down.Jitter, down.JitterDist, down.LossPct = 5*time.Millisecond, "normal", 1
	down.DupPct, down.CorruptPct = 1, 1
	up := the80x10(seed + 1)
	up.Jitter, up.JitterDist = 5*time.Millisecond, "normal"
	up.GE, up.HasGE = linkspec.GE{P: 1, R: 30, OneMinusH: 100}, true
	up.ReorderPct, up.ReorderGap = 2, 5
	return [2]linkspec.Direction{down, up}
}

// echoTrace runs a sender and an echoing receiver over a link of dirs in
// a bubble and returns the link's trace: the client writes n datagrams
// of seeded sizes at seeded times, the server echoes each.
func echoTrace(t *testing.T, dirs [2]linkspec.Direction, n int) string {
	var out string
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var lines [2][]string
		l := newLink(t, dirs, func(e Event) {
			mu.Lock()
			lines[e.Dir] = append(lines[e.Dir], e.String())
			mu.Unlock()
		})
		srv, cli := listen(t, l, 0), listen(t, l, 1)
		go func() {
			buf := make([]byte, 2048)
			for {
				k, from, err := srv.ReadFrom(buf)
				if err != nil {
					return
				}
				_, _ = srv.WriteTo(buf[:k], from)
			}
		}()
		go func() {
			buf := make([]byte, 2048)
			for {
				if _, _, err := cli.ReadFrom(buf); err != nil {
					return
				}
			}
		}()
		rng := rand.New(rand.NewPCG(7, 8))
		for range n {
			time.Sleep(time.Duration(rng.Int64N(int64(3 * time.Millisecond))))
			if _, err := cli.WriteTo(make([]byte, 20+rng.IntN(1400)), srv.LocalAddr()); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(time.Second) // everything in flight arrives
		_ = l.Close()
		out = "up\n" + strings.Join(lines[1], "\n") + "\ndown\n" + strings.Join(lines[0], "\n")
	})
	return out
}

// TestDeterministic: the same seeds and the same writes give the same
// trace, byte for byte; other seeds give another.
func TestDeterministic(t *testing.T) {
	a := echoTrace(t, lossy(11), 3000)
	b := echoTrace(t, lossy(11), 3000)
	if a != b {
		al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
		for i := range min(len(al), len(bl)) {
			if al[i] != bl[i] {
				t.Fatalf("two runs part at trace line %d:\n%s\n%s", i+1, al[i], bl[i])
			}
		}
		t.Fatalf("two runs' traces differ in length: %d and %d lines", len(al), len(bl))
	}
	for _, what := range []string{"lost", "delivered", "dup", "flipped", "checksum-drop"} {
		if !strings.Contains(a, what) {
			t.Errorf("the trace has no %q event: the profile does not exercise what the test is for", what)
		}
	}
	if c := echoTrace(t, lossy(12), 3000); c == a {
		t.Error("another seed gave the same trace")
	}
}

// TestClose: closing a socket wakes its reader with net.ErrClosed, and
// closing the link wakes every reader and refuses writes.
func TestClose(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLink(t, [2]linkspec.Direction{the80x10(1), the80x10(2)}, nil)
		a, b := listen(t, l, 0), listen(t, l, 1)
		errs := make(chan error, 2)
		for _, c := range []net.PacketConn{a, b} {
			go func() {
				_, _, err := c.ReadFrom(make([]byte, 10))
				errs <- err
			}()
		}
		synctest.Wait()
		_ = a.Close()
		if err := <-errs; !errors.Is(err, net.ErrClosed) {
			t.Errorf("a read on a closed socket: %v, want net.ErrClosed", err)
		}
		_ = l.Close()
		if err := <-errs; !errors.Is(err, net.ErrClosed) {
			t.Errorf("a read on a closed link: %v, want net.ErrClosed", err)
		}
		c, err := l.ListenPacket(0, "udp", ":0")
		if err == nil {
			_ = c.Close()
			t.Error("ListenPacket on a closed link succeeded")
		}
	})
}

// TestDeadlines: a read deadline ends a read at that time exactly with a
// timeout; a deadline moved to now wakes a blocked read.
func TestDeadlines(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLink(t, [2]linkspec.Direction{the80x10(1), the80x10(2)}, nil)
		c := listen(t, l, 0)
		start := time.Now()
		_ = c.SetReadDeadline(start.Add(50 * time.Millisecond))
		_, _, err := c.ReadFrom(make([]byte, 10))
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) || time.Since(start) != 50*time.Millisecond {
			t.Errorf("read with a 50 ms deadline: %v after %v", err, time.Since(start))
		}
		_ = c.SetReadDeadline(time.Time{})
		done := make(chan error, 1)
		go func() {
			_, _, err := c.ReadFrom(make([]byte, 10))
			done <- err
		}()
		time.Sleep(time.Second)
		_ = c.SetReadDeadline(time.Now())
		if err := <-done; !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("a blocked read after its deadline moved to now: %v", err)
		}
		_ = c.SetWriteDeadline(time.Now())
		if _, err := c.WriteTo([]byte("x"), net.UDPAddrFromAddrPort(netip.AddrPortFrom(clientAddr, 1))); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Errorf("a write after its deadline: %v", err)
		}
	})
}

// TestReceiveQueue: a socket that does not read holds what its receive
// buffer holds, and the rest is counted as socket drops; a port nobody
// bound counts as no socket.
func TestReceiveQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fast := linkspec.Direction{Delay: time.Millisecond, RateMbit: 1000, Limit: 1000}
		l := newLink(t, [2]linkspec.Direction{fast, fast}, nil)
		srv, cli := listen(t, l, 0), listen(t, l, 1)
		rb := cli.(interface{ SetReadBuffer(int) error })
		if err := rb.SetReadBuffer(1000); err != nil {
			t.Fatal(err)
		}
		for range 25 {
			if _, err := srv.WriteTo(make([]byte, 100), cli.LocalAddr()); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := srv.WriteTo(make([]byte, 100), net.UDPAddrFromAddrPort(netip.AddrPortFrom(clientAddr, 9))); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
		c := l.Counters(linkspec.Down)
		if c.Forwarded != 26 || c.SocketDrops != 15 || c.NoSocketDrops != 1 {
			t.Errorf("forwarded %d, socket drops %d, no socket %d; want 26, 15 (a 1000-byte queue holds ten 100-byte datagrams) and 1",
				c.Forwarded, c.SocketDrops, c.NoSocketDrops)
		}
		if err := rb.SetReadBuffer(0); err == nil {
			t.Error("SetReadBuffer(0) succeeded")
		}
	})
}

// TestListenPacket: what can be bound and what is refused, and why.
func TestListenPacket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLink(t, [2]linkspec.Direction{the80x10(1), the80x10(2)}, nil)
		for _, addr := range []string{":0", "0.0.0.0:0", ""} {
			c, err := l.ListenPacket(0, "udp4", addr)
			if err != nil {
				t.Fatalf("%s: %v", addr, err)
			}
			t.Logf("%s bound to %v", addr, c.LocalAddr())
		}
		if c := listen(t, l, 0); c.LocalAddr().String() != "198.18.0.1:32771" {
			t.Errorf("the fourth port 0 socket is %v, want 198.18.0.1:32771 (ports from 32768 up, in order)", c.LocalAddr())
		}
		if _, err := l.ListenPacket(1, "udp", ":4433"); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			end                 int
			network, addr, says string
		}{
			{0, "tcp", ":0", "UDP over IPv4 only"},
			{0, "udp6", ":0", "UDP over IPv4 only"},
			{0, "udp", "198.18.0.2:0", "this end's only address is 198.18.0.1"},
			{1, "udp", ":4433", "already in use"},
			{1, "udp", ":http", "not a number"},
			{2, "udp", ":0", "ends are 0 and 1"},
		} {
			if _, err := l.ListenPacket(c.end, c.network, c.addr); err == nil || !strings.Contains(err.Error(), c.says) {
				t.Errorf("ListenPacket(%d, %q, %q) = %v, want it to say %q", c.end, c.network, c.addr, err, c.says)
			}
		}
		srv := listen(t, l, 0)
		for _, c := range []struct {
			to   string
			size int
			says string
		}{
			{"198.18.0.1:9", 10, "no route to 198.18.0.1"},
			{"198.18.0.2:9", maxPayload + 1, "message too long"},
		} {
			to := net.UDPAddrFromAddrPort(netip.MustParseAddrPort(c.to))
			if _, err := srv.WriteTo(make([]byte, c.size), to); err == nil || !strings.Contains(err.Error(), c.says) {
				t.Errorf("WriteTo(%d bytes, %s) = %v, want it to say %q", c.size, c.to, err, c.says)
			}
		}
	})
}

// TestRealTime: outside a bubble the link runs on the real clock: a
// datagram over a 20 ms link arrives no sooner than 20 ms after it was
// written (how much later depends on the machine, so only a generous
// bound on that).
func TestRealTime(t *testing.T) {
	l := newLink(t, [2]linkspec.Direction{{Delay: 20 * time.Millisecond, RateMbit: 100, Limit: 100}, the80x10(2)}, nil)
	srv, cli := listen(t, l, 0), listen(t, l, 1)
	_ = cli.SetReadDeadline(time.Now().Add(30 * time.Second))
	start := time.Now()
	if _, err := srv.WriteTo([]byte("hello"), cli.LocalAddr()); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 100)
	n, _, err := cli.ReadFrom(buf)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 20*time.Millisecond || string(buf[:n]) != "hello" {
		t.Errorf("%q arrived after %v, want hello after at least 20 ms", buf[:n], took)
	}
}

// TestScheduleAndQueue: a blackout from the schedule drops what is
// written while the link is down, at its times exactly, and an FQ-CoDel
// bottleneck flooded beyond its limit drops from its queue, each traced.
func TestScheduleAndQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		down := the80x10(3)
		down.Changes = []linkspec.Change{{At: 100 * time.Millisecond, Set: "down"}, {At: 200 * time.Millisecond, Set: "up"}}
		up := the80x10(4)
		up.Queue, up.Limit = linkspec.Queue{Kind: linkspec.FQCoDel}, 50
		var mu sync.Mutex
		whats := map[linkspec.Dir]map[What]int{linkspec.Down: {}, linkspec.Up: {}}
		l := newLink(t, [2]linkspec.Direction{down, up}, func(e Event) {
			mu.Lock()
			whats[e.Dir][e.What]++
			mu.Unlock()
		})
		srv, cli := listen(t, l, 0), listen(t, l, 1)
		for i := range 30 {
			// One every 10 ms from 5 ms: 10 of them inside [100, 200) ms.
			time.Sleep(time.Until(l.Base().Add(time.Duration(5+10*i) * time.Millisecond)))
			if _, err := srv.WriteTo([]byte{byte(i)}, cli.LocalAddr()); err != nil {
				t.Fatal(err)
			}
		}
		for range 300 {
			if _, err := cli.WriteTo(make([]byte, 1400), srv.LocalAddr()); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(2 * time.Second)
		mu.Lock()
		defer mu.Unlock()
		if c := l.Counters(linkspec.Down); whats[linkspec.Down][Blackout] != 10 || c.BlackoutDrops != 10 || c.Changes != 2 {
			t.Errorf("blackout drops %d traced, %d counted, changes %d; want 10, 10 and 2", whats[linkspec.Down][Blackout], c.BlackoutDrops, c.Changes)
		}
		c := l.Counters(linkspec.Up)
		if q := whats[linkspec.Up][QueueDrop] + whats[linkspec.Up][CoDelDrop]; q == 0 || uint64(q) != c.QueueDrops+c.CoDelDrops ||
			whats[linkspec.Up][Delivered] != int(c.Forwarded) || int(c.Forwarded)+q != 300 {
			t.Errorf("fq_codel: %d dropped from the queue (counted %d+%d), %d delivered (forwarded %d) of 300",
				q, c.QueueDrops, c.CoDelDrops, whats[linkspec.Up][Delivered], c.Forwarded)
		}
	})
}

// ExampleLink is kept in example_test.go; this checks the String form
// the trace lines use.
func TestEventString(t *testing.T) {
	e := Event{At: 40*time.Millisecond + 113600*time.Nanosecond, Dir: linkspec.Up, Seq: 3, Dup: true, Size: 142, What: Accepted,
		Due: 80 * time.Millisecond, Corrupted: true, Bit: 99}
	if got, want := e.String(), "40.1136ms up #3 dup 142B accepted due 80ms bit 99 flipped"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := fmt.Sprint(What(99)); got != "What(99)" {
		t.Errorf("What(99) prints %q", got)
	}
}

// TestPastDeadlineQueued: once a read deadline has passed a read fails
// with a timeout even with a datagram queued, as a UDP socket's does;
// the datagram waits for the next read before its deadline.
func TestPastDeadlineQueued(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newLink(t, [2]linkspec.Direction{the80x10(1), the80x10(2)}, nil)
		a, b := listen(t, l, 0), listen(t, l, 1)
		if _, err := b.WriteTo([]byte("queued"), a.LocalAddr()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		for _, at := range []time.Time{time.Now(), time.Now().Add(-time.Hour)} {
			_ = a.SetReadDeadline(at)
			n, _, err := a.ReadFrom(make([]byte, 10))
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("a read with its deadline passed (%v ago) and a datagram queued: %d bytes, %v; want a timeout", time.Since(at), n, err)
			}
		}
		_ = a.SetReadDeadline(time.Now().Add(time.Second))
		buf := make([]byte, 10)
		if n, _, err := a.ReadFrom(buf); err != nil || string(buf[:n]) != "queued" {
			t.Errorf("the read after the deadline was moved a second ahead: %q, %v", buf[:n], err)
		}
	})
}

// TestListenPacketClosing: a socket bound while the link closes is
// either refused or closed with the rest, never left open. The hook
// closes the link at the point where ListenPacket once checked for it
// too early.
func TestListenPacketClosing(t *testing.T) {
	l := newLink(t, [2]linkspec.Direction{the80x10(1), the80x10(2)}, nil)
	testHookListen = func() { _ = l.Close() }
	defer func() { testHookListen = nil }()
	c, err := l.ListenPacket(0, "udp", ":0")
	if err == nil {
		_ = c.Close()
		t.Fatal("ListenPacket returned an open socket on a link closed as it bound it; a reader without a deadline would wait for ever")
	}
	if !errors.Is(err, errLinkClosed) {
		t.Errorf("ListenPacket on a closing link: %v, want it to say the link was closed", err)
	}
}

// TestListenPacketCloseRace runs ListenPacket and Link.Close at once,
// many times (under -race too): every socket ListenPacket returns is
// closed once Close has returned.
func TestListenPacketCloseRace(t *testing.T) {
	for i := range 500 {
		l, err := New(Config{Dirs: [2]linkspec.Direction{the80x10(1), the80x10(2)}, Addrs: [2]netip.Addr{serverAddr, clientAddr}})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var c net.PacketConn
		wg.Go(func() { c, _ = l.ListenPacket(i%2, "udp", ":0") })
		wg.Go(func() { _ = l.Close() })
		wg.Wait()
		if c != nil {
			if err := c.SetReadDeadline(time.Time{}); !errors.Is(err, net.ErrClosed) {
				t.Fatalf("try %d: a socket bound as the link closed is still open after Close (%v)", i, err)
			}
		}
	}
}
