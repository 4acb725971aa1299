package shapedlink

import (
	"io"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestEgressCountersSeeGSO checks the GSO evidence counters: a UDP_SEGMENT
// write shows up at the egress hook as one packet longer than a wire
// packet, a plain write does not, and the receiver still gets wire-sized
// datagrams (the device segments after the hook).
func TestEgressCountersSeeGSO(t *testing.T) {
	for _, b := range []Backend{BackendNone, BackendEmulator} {
		t.Run(string(b), func(t *testing.T) {
			l := newTestLink(t, "2:100", b)
			srv, cli := udpPair(t, l)
			to := cli.LocalAddr().(*net.UDPAddr)
			// Prime ARP so only our datagrams are counted below.
			if _, err := echoRoundTrip(t, srv, cli, 2*time.Second); err != nil {
				t.Fatal(err)
			}
			before, err := l.Instruments().EgressCounters(ServerEnd)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := srv.WriteToUDP(make([]byte, 1400), to); err != nil {
				t.Fatal(err)
			}
			plain, err := l.Instruments().EgressCounters(ServerEnd)
			if err != nil {
				t.Fatal(err)
			}
			if d := plain.All.Packets - before.All.Packets; d != 1 {
				t.Errorf("a plain 1400-byte datagram counted as %d packets, want 1", d)
			}
			if plain.Oversize.Packets != before.Oversize.Packets {
				t.Errorf("a plain datagram counted as oversize: %+v -> %+v", before, plain)
			}
			rc, err := srv.SyscallConn()
			if err != nil {
				t.Fatal(err)
			}
			var serr error
			if err := rc.Control(func(fd uintptr) {
				serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_UDP, unix.UDP_SEGMENT, 1400)
			}); err != nil || serr != nil {
				t.Fatalf("setting UDP_SEGMENT: %v %v", err, serr)
			}
			if _, err := srv.WriteToUDP(make([]byte, 3*1400), to); err != nil {
				t.Fatalf("UDP_SEGMENT write: %v", err)
			}
			gso, err := l.Instruments().EgressCounters(ServerEnd)
			if err != nil {
				t.Fatal(err)
			}
			if d := gso.Oversize.Packets - plain.Oversize.Packets; d != 1 {
				t.Errorf("a 3-segment UDP_SEGMENT write counted as %d oversize packets, want 1 (%+v)", d, gso)
			}
			if d := gso.Oversize.Bytes - plain.Oversize.Bytes; d != 3*1400+8+20+14 {
				t.Errorf("oversize bytes grew by %d, want %d", d, 3*1400+8+20+14)
			}
			buf := make([]byte, 65536)
			cli.SetReadDeadline(time.Now().Add(2 * time.Second))
			for i := 0; i < 4; i++ {
				n, _, err := cli.ReadFromUDP(buf)
				if err != nil {
					t.Fatalf("datagram %d: %v", i, err)
				}
				if n != 1400 {
					t.Errorf("datagram %d is %d bytes, want 1400 (segmented on the wire)", i, n)
				}
			}
		})
	}
}

// TestTCPWireSized checks that GSO max segs 1 brings TCP down to wire-sized
// packets before the egress hook (and so before any qdisc): a bulk transfer
// produces no packet longer than one wire packet.
func TestTCPWireSized(t *testing.T) {
	l := newTestLink(t, "1:1000", BackendNone)
	var ln net.Listener
	if err := l.Client().Do(func() error {
		var err error
		ln, err = net.Listen("tcp4", l.ClientAddr().String()+":0")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	got := make(chan int64, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			got <- -1
			return
		}
		defer c.Close()
		n, _ := io.Copy(io.Discard, c)
		got <- n
	}()
	var c net.Conn
	if err := l.Server().Do(func() error {
		var err error
		c, err = net.Dial("tcp4", ln.Addr().String())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const total = 8 << 20
	buf := make([]byte, 64<<10)
	for sent := 0; sent < total; sent += len(buf) {
		if _, err := c.Write(buf); err != nil {
			t.Fatal(err)
		}
	}
	c.Close()
	if n := <-got; n != total {
		t.Fatalf("received %d bytes, want %d", n, total)
	}
	ec, err := l.Instruments().EgressCounters(ServerEnd)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("server egress: %+v, %.0f bytes per packet", ec, float64(ec.All.Bytes)/float64(ec.All.Packets))
	if ec.Oversize.Packets != 0 {
		t.Errorf("%d TCP packets longer than one wire packet reached the egress hook", ec.Oversize.Packets)
	}
	if ec.All.Packets < total/1448 {
		t.Errorf("%d packets carried %d bytes; want at least %d wire-sized packets", ec.All.Packets, total, total/1448)
	}
}
