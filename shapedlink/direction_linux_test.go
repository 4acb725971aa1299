package shapedlink

import (
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAsymmetricEmulator: a link of 50 Mbit/s down and 5 Mbit/s up, with
// 5 ms down and 15 ms up, is applied per direction by the emulator and
// carries each direction's rate, measured at the wire by the shaper's
// own count while UDP saturates both directions at once.
func TestAsymmetricEmulator(t *testing.T) {
	l := newTestLink(t, "20:50,down.delay=5,up.delay=15,up.rate=5", BackendEmulator)
	a := l.Applied()
	if len(a) != 2 || !strings.Contains(a[0], "delay 5ms rate 50Mbit") || !strings.Contains(a[1], "delay 15ms rate 5Mbit") {
		t.Fatalf("applied %q, want server->client at 5ms and 50Mbit, client->server at 15ms and 5Mbit", a)
	}
	srv, cli := udpPair(t, l)
	fwd := func() (down, up uint64) {
		sh, ok := l.ShaperStats()
		if !ok {
			t.Fatal("no shaper statistics")
		}
		return sh.Directions[0].ForwardedBytes, sh.Directions[1].ForwardedBytes
	}
	// Offer about twice each rate in 1000-byte datagrams for 1.5 s and
	// read the shaper's forwarded bytes over the last second.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	send := func(c *net.UDPConn, to *net.UDPAddr, mbit float64) {
		defer wg.Done()
		msg := make([]byte, 1000)
		gap := time.Duration(float64(len(msg)*8) / (2 * mbit * 1e6) * 1e9)
		next := time.Now()
		for {
			select {
			case <-stop:
				return
			default:
			}
			_, _ = c.WriteToUDP(msg, to)
			next = next.Add(gap)
			if d := time.Until(next); d > 0 {
				time.Sleep(d)
			}
		}
	}
	wg.Add(2)
	go send(srv, cli.LocalAddr().(*net.UDPAddr), 50)
	go send(cli, srv.LocalAddr().(*net.UDPAddr), 5)
	time.Sleep(500 * time.Millisecond)
	d0, u0 := fwd()
	t0 := time.Now()
	time.Sleep(time.Second)
	d1, u1 := fwd()
	el := time.Since(t0).Seconds()
	close(stop)
	wg.Wait()
	down, up := float64(d1-d0)*8/el/1e6, float64(u1-u0)*8/el/1e6
	t.Logf("at the wire: down %.2f Mbit/s, up %.2f Mbit/s", down, up)
	if down < 0.9*50 || down > 1.01*50 {
		t.Errorf("down carried %.2f Mbit/s, want 45-50.5 (the down rate, 50)", down)
	}
	if up < 0.9*5 || up > 1.01*5 {
		t.Errorf("up carried %.2f Mbit/s, want 4.5-5.05 (the up rate, 5)", up)
	}
}
