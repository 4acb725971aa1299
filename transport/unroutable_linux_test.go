package transport

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// noRoute is a client socket that, while down is set, fails every send
// as the kernel does when the host has no route to the peer.
type noRoute struct {
	udpSocket
	down   *atomic.Bool
	failed *atomic.Int64
}

func (s noRoute) err() error {
	s.failed.Add(1)
	return &net.OpError{Op: "write", Net: "udp", Err: os.NewSyscallError("sendmsg", unix.ENETUNREACH)}
}

func (s noRoute) WriteMsgUDP(b, oob []byte, addr *net.UDPAddr) (int, int, error) {
	if s.down.Load() {
		return 0, 0, s.err()
	}
	return s.udpSocket.WriteMsgUDP(b, oob, addr)
}

func (s noRoute) WriteTo(b []byte, addr net.Addr) (int, error) {
	if s.down.Load() {
		return 0, s.err()
	}
	return s.udpSocket.WriteTo(b, addr)
}

// TestNoRouteIsLoss takes a live client session's route away while its
// channels carry data, first on the socket it dialled from and then on
// the one it migrated to: the sends that fail must count as lost packets,
// the data must arrive once the route is back, and no connection may end.
// Before routeLossConn, quic-go ended the connection on the first
// "sendmsg: network is unreachable", as a client did in a break-first
// path change when a send fell in the kernel's moment without a route.
func TestNoRouteIsLoss(t *testing.T) {
	for _, arm := range []Arm{ArmQUIC, ArmQUICPerChannel} {
		t.Run(string(arm), func(t *testing.T) {
			var down atomic.Bool
			var failed atomic.Int64
			co := options(t, arm, 2)
			co.wrapUDP = func(s udpSocket) udpSocket { return noRoute{udpSocket: s, down: &down, failed: &failed} }
			server, client := pair(t, arm, options(t, arm, 2), co)
			exchange(t, server, client, 4096)
			outage := func(what string) {
				t.Helper()
				before := failed.Load()
				down.Store(true)
				done := make(chan struct{})
				go func() { defer close(done); exchange(t, server, client, 64<<10) }()
				ended := func() string {
					for i, e := range append(client.ConnErrors(), server.ConnErrors()...) {
						if e != "" {
							return fmt.Sprintf("connection %d ended: %s", i, e)
						}
					}
					return ""
				}
				deadline := time.Now().Add(10 * time.Second)
				for failed.Load() < before+10 && ended() == "" && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
				down.Store(false)
				// Wait for the exchange; if a connection ended, past
				// deadlines end the exchange at once.
				for waiting := true; waiting; {
					select {
					case <-done:
						waiting = false
					case <-time.After(10 * time.Millisecond):
						if e := ended(); e != "" {
							for i := range client.Channels() {
								_ = client.Channel(i).SetDeadline(time.Now())
								_ = server.Channel(i).SetDeadline(time.Now())
							}
							<-done
							t.Fatalf("%s: %s", what, e)
						}
					}
				}
				if n := failed.Load() - before; n < 10 {
					t.Fatalf("%s: only %d sends failed in 10 s", what, n)
				}
				if e := ended(); e != "" {
					t.Fatalf("%s: %s", what, e)
				}
			}
			outage("on the dialled socket")
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := client.Migrate(ctx, netip.MustParseAddr("127.0.0.2")); err != nil {
				t.Fatalf("Migrate: %v", err)
			}
			outage("on the migrated socket")
			exchange(t, server, client, 4096)
			var dropped int64
			for _, q := range client.State().QUIC {
				dropped += q.UnroutableDrops
				if !strings.HasPrefix(q.LocalAddr, "127.0.0.2:") {
					t.Errorf("connection on %s after migrating to 127.0.0.2", q.LocalAddr)
				}
			}
			if dropped != failed.Load() {
				t.Errorf("State counts %d unroutable drops, the sockets failed %d sends", dropped, failed.Load())
			}
			for _, q := range server.State().QUIC {
				if q.UnroutableDrops != 0 {
					t.Errorf("server reports %d unroutable drops, want 0", q.UnroutableDrops)
				}
			}
		})
	}
}

// TestNoRouteFailsDial: a client with no route to the server still fails
// its dial at once, instead of waiting out the handshake timeout; only a
// connection that is up rides a moment without a route out.
func TestNoRouteFailsDial(t *testing.T) {
	var down atomic.Bool
	var failed atomic.Int64
	down.Store(true)
	co := options(t, ArmQUIC, 1)
	co.wrapUDP = func(s udpSocket) udpSocket { return noRoute{udpSocket: s, down: &down, failed: &failed} }
	ln, err := Listen(context.Background(), ArmQUIC, "127.0.0.1:0", options(t, ArmQUIC, 1))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	start := time.Now()
	s, err := Dial(ctx, ArmQUIC, ln.Addr().String(), co)
	if err == nil {
		s.Close()
		t.Fatal("Dial succeeded with every send failing")
	}
	if !strings.Contains(err.Error(), "network is unreachable") || time.Since(start) > 5*time.Second {
		t.Errorf("Dial failed after %v with %v; want the send error, at once", time.Since(start), err)
	}
}
