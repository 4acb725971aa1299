package shapedlink

import (
	"math"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// sendUDP writes n datagrams of size bytes from srv to cli's address.
func sendUDP(t testing.TB, srv, cli *net.UDPConn, n, size int) {
	t.Helper()
	to := cli.LocalAddr().(*net.UDPAddr)
	buf := make([]byte, size)
	for i := 0; i < n; i++ {
		if _, err := srv.WriteToUDP(buf, to); err != nil {
			t.Fatalf("datagram %d: %v", i, err)
		}
	}
}

// bigReadBuffer gives c a 16 MB receive buffer (SO_RCVBUFFORCE, beyond
// rmem_max) so a burst cannot overflow it while the reader is descheduled.
func bigReadBuffer(t testing.TB, c *net.UDPConn) {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 16<<20)
	})
	if serr != nil {
		t.Logf("SO_RCVBUFFORCE: %v; falling back to SO_RCVBUF", serr)
		c.SetReadBuffer(16 << 20)
	}
}

// drain counts datagrams arriving on c until quiet passes with none.
func drain(c *net.UDPConn, quiet time.Duration) int {
	buf := make([]byte, 2048)
	n := 0
	for {
		c.SetReadDeadline(time.Now().Add(quiet))
		if _, _, err := c.ReadFromUDP(buf); err != nil {
			return n
		}
		n++
	}
}

// receiveCount counts datagrams arriving on c. Once want yields the number
// expected, it returns when that many have arrived (plus any extra that
// follows within 200 ms, so a surplus shows), or when none has arrived for
// 10 s: a shortfall.
func receiveCount(c *net.UDPConn, want <-chan int) int {
	buf := make([]byte, 2048)
	n, target := 0, -1
	last := time.Now()
	for {
		if target < 0 {
			select {
			case target = <-want:
			default:
			}
		}
		if target >= 0 && n >= target {
			return n + drain(c, 200*time.Millisecond)
		}
		if target >= 0 && time.Since(last) > 10*time.Second {
			return n
		}
		c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
		if _, _, err := c.ReadFromUDP(buf); err != nil {
			continue
		}
		n++
		last = time.Now()
	}
}

func TestBlockUDP(t *testing.T) {
	l := newTestLink(t, "1:100", BackendNone)
	srv, cli := udpPair(t, l)
	f, err := l.Control().BlockUDP(ServerEnd)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(f)
	const n, size = 50, 100
	sendUDP(t, srv, cli, n, size)
	if got := drain(cli, 200*time.Millisecond); got != 0 {
		t.Errorf("%d of %d datagrams got through the UDP block", got, n)
	}
	c, err := f.Dropped()
	if err != nil {
		t.Fatal(err)
	}
	if c.Packets != n || c.Bytes != n*(size+8+20+14) {
		t.Errorf("block counter = %+v, want %d packets and %d bytes", c, n, n*(size+8+20+14))
	}
	// The other direction is not blocked.
	if _, err := cli.WriteToUDP([]byte("up"), srv.LocalAddr().(*net.UDPAddr)); err != nil {
		t.Fatal(err)
	}
	if got := drain(srv, 500*time.Millisecond); got != 1 {
		t.Errorf("client-to-server datagrams received = %d, want 1", got)
	}
	// TCP still works while UDP is blocked.
	if err := tcpExchange(t, l); err != nil {
		t.Errorf("TCP with UDP blocked: %v", err)
	}
	if err := f.Remove(); err != nil {
		t.Fatal(err)
	}
	sendUDP(t, srv, cli, 5, size)
	if got := drain(cli, 500*time.Millisecond); got != 5 {
		t.Errorf("after Remove, %d of 5 datagrams arrived", got)
	}
	if c2, err := f.Dropped(); err != nil || c2 != c {
		t.Errorf("after Remove the counter is %+v (%v), want it frozen at %+v", c2, err, c)
	}
}

// TestDropRandom checks that the random drop's count over a fixed number
// of packets falls inside a 99.9% binomial interval, and that the receiver
// saw exactly the packets that were not dropped.
func TestDropRandom(t *testing.T) {
	l := newTestLink(t, "1:100", BackendNone)
	srv, cli := udpPair(t, l)
	bigReadBuffer(t, cli)
	const pct = 10.0
	f, err := l.Control().DropRandom(ServerEnd, pct)
	if err != nil {
		t.Fatal(err)
	}
	before, err := l.Instruments().EgressCounters(ServerEnd)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	// The receiver reads while the sender sends (the datagrams would not
	// all fit in its buffer) and stops once it has what the drop counter
	// says got through, however slowly the machine runs; a quiet gap ends
	// it only when that number is known.
	expect := make(chan int, 1)
	received := make(chan int)
	go func() { received <- receiveCount(cli, expect) }()
	// Pace a little so the receiver's buffer never overflows.
	for i := 0; i < n; i += 200 {
		sendUDP(t, srv, cli, 200, 32)
		time.Sleep(time.Millisecond)
	}
	after, err := l.Instruments().EgressCounters(ServerEnd)
	if err != nil {
		t.Fatal(err)
	}
	seen := after.All.Packets - before.All.Packets
	d, err := f.Dropped()
	if err != nil {
		t.Fatal(err)
	}
	expect <- n - int(min(d.Packets, n))
	got := <-received
	if seen != n {
		t.Fatalf("egress hook counted %d packets, want %d", seen, n)
	}
	// z = 4.89: a correct filter falls outside about once in a million
	// runs (3.29, the 99.9% interval, failed one run in a thousand), while
	// a wrong percentage is still caught (the interval is 10% +- 0.5%).
	p := pct / 100
	mean, sd := n*p, math.Sqrt(n*p*(1-p))
	lo, hi := mean-4.89*sd, mean+4.89*sd
	t.Logf("dropped %d of %d (expected %.0f, 99.9999%% interval [%.0f, %.0f]); received %d", d.Packets, n, mean, lo, hi, got)
	if float64(d.Packets) < lo || float64(d.Packets) > hi {
		t.Errorf("dropped %d of %d at %v%%, outside the 99.9999%% binomial interval [%.0f, %.0f]", d.Packets, n, pct, lo, hi)
	}
	if uint64(got) != n-d.Packets {
		t.Errorf("received %d, want %d sent minus %d dropped = %d", got, n, d.Packets, n-d.Packets)
	}
}

func TestFilterBadInput(t *testing.T) {
	l := newTestLink(t, "1:100", BackendNone)
	for _, pct := range []float64{0, -1, 101, math.NaN(), 0.001} {
		if _, err := l.Control().DropRandom(ServerEnd, pct); err == nil {
			t.Errorf("DropRandom(%v) accepted", pct)
		}
	}
	if _, err := l.Control().BlockUDP(End(7)); err == nil {
		t.Error("BlockUDP(End(7)) accepted")
	}
}
