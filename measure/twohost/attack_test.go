package twohost

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"slices"
	"sync"
	"testing"
	"time"
)

// idleConn is an attacker's connection: it reads the daemon's greeting
// and then says nothing, holding a place among those authenticating.
func idleConn(addr string, from net.IP) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: from}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// driverFrom is a driver with the test secret whose control connection
// comes from the address from.
func driverFrom(td *testDaemon, from string) *Client {
	r := td.remote(testSecret)
	r.source = net.ParseIP(from)
	return r
}

// TestDaemonAdmitsDriverPastIdleConnections: many connections that never
// answer the greeting, all from one address and none with the secret, do
// not keep a driver out, whether it comes from another address or from
// the attacker's own.
func TestDaemonAdmitsDriverPastIdleConnections(t *testing.T) {
	td := startTestDaemon(t, DaemonConfig{})
	attacker := net.ParseIP("127.0.0.1")
	held := 0
	for range 3 * maxPreAuth {
		c, err := idleConn(td.Addr().String(), attacker)
		if err != nil {
			t.Fatalf("an idle connection: %v", err)
		}
		defer c.Close()
		held++
	}
	t.Logf("%d idle connections from %v opened", held, attacker)
	for _, from := range []string{"127.0.0.2", "127.0.0.1"} {
		r := driverFrom(td, from)
		if err := r.Ready(context.Background()); err != nil {
			t.Errorf("a driver from %s behind %d idle connections from %v: %v", from, held, attacker, err)
			continue
		}
		r.Close()
		waitFor(t, "the session to end", func() bool {
			td.mu.Lock()
			defer td.mu.Unlock()
			return td.active == ""
		})
	}
}

// TestDaemonAdmitsDriverPastReopenedConnections: an attacker that opens a
// new idle connection as soon as one of its own ends, for as long as the
// test runs, does not keep a driver from another address out.
func TestDaemonAdmitsDriverPastReopenedConnections(t *testing.T) {
	td := startTestDaemon(t, DaemonConfig{HandshakeTimeout: 500 * time.Millisecond})
	attacker := net.ParseIP("127.0.0.1")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	opened := 0
	for range 32 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				c, err := idleConn(td.Addr().String(), attacker)
				if err != nil {
					time.Sleep(5 * time.Millisecond)
					continue
				}
				mu.Lock()
				opened++
				mu.Unlock()
				// Held until the daemon ends it, then at once another.
				c.SetReadDeadline(time.Time{})
				go func() { <-stop; c.Close() }()
				c.Read(make([]byte, 512))
				c.Read(make([]byte, 512))
				c.Close()
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()
	time.Sleep(time.Second) // the attack under way, past one deadline
	for i := range 5 {
		r := driverFrom(td, "127.0.0.2")
		if err := r.Ready(context.Background()); err != nil {
			t.Errorf("session %d from 127.0.0.2 during the attack: %v", i+1, err)
			continue
		}
		r.Close()
		waitFor(t, "the session to end", func() bool {
			td.mu.Lock()
			defer td.mu.Unlock()
			return td.active == ""
		})
	}
	mu.Lock()
	t.Logf("the attacker opened %d connections", opened)
	mu.Unlock()
}

// addrConn is a connection that is only an address, for admit.
type addrConn struct {
	net.Conn
	addr     net.Addr
	deadline time.Time
}

func (a *addrConn) RemoteAddr() net.Addr { return a.addr }
func (a *addrConn) SetReadDeadline(t time.Time) error {
	a.deadline = t
	return nil
}

// TestAdmitDisplaces: the bounds on connections waiting for a proof
// displace the oldest of the source at its bound, or, at the bound in
// all, the oldest of the source holding the most; an IPv6 /64 counts as
// one source, an IPv4 address (mapped or not) as one.
func TestAdmitDisplaces(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"192.0.2.1", "::ffff:192.0.2.1"},
		{"2001:db8:1:2::1", "2001:db8:1:2:ffff::9"},
	} {
		if sa, sb := sourceOf(&net.TCPAddr{IP: net.ParseIP(tc.a)}), sourceOf(&net.TCPAddr{IP: net.ParseIP(tc.b)}); sa != sb {
			t.Errorf("%s and %s count as %s and %s, want one source", tc.a, tc.b, sa, sb)
		}
	}
	if sa, sb := sourceOf(&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2::1")}), sourceOf(&net.TCPAddr{IP: net.ParseIP("2001:db8:1:3::1")}); sa == sb {
		t.Errorf("two /64s count as one source, %s", sa)
	}

	d := &Daemon{}
	conn := func(ip string) *addrConn { return &addrConn{addr: &net.TCPAddr{IP: net.ParseIP(ip), Port: 1}} }
	var first []*preAuth
	for range maxPreAuthPerSource {
		first = append(first, d.admit(conn("198.18.0.1")))
	}
	p := d.admit(conn("198.18.0.1"))
	if !first[0].displaced.Load() || first[1].displaced.Load() || p.displaced.Load() {
		t.Errorf("a source past its bound: the oldest displaced %v, the next %v, the newest %v; want only the oldest",
			first[0].displaced.Load(), first[1].displaced.Load(), p.displaced.Load())
	}
	if c := first[0].conn.(*addrConn); c.deadline.IsZero() {
		t.Error("the displaced connection's reads were not ended")
	}
	// Up to the bound in all: one source at its bound, the rest one each.
	var others []*preAuth
	for i := 0; d.preAuthCount < maxPreAuth; i++ {
		others = append(others, d.admit(conn(fmt.Sprintf("198.18.1.%d", i+1))))
	}
	next := d.admit(conn("198.18.2.1"))
	if !first[1].displaced.Load() || slices.ContainsFunc(others, func(q *preAuth) bool { return q.displaced.Load() }) || next.displaced.Load() {
		t.Errorf("at the bound in all: the busiest source's oldest displaced %v, any other %v",
			first[1].displaced.Load(), slices.ContainsFunc(others, func(q *preAuth) bool { return q.displaced.Load() }))
	}
	if d.preAuthCount != maxPreAuth {
		t.Errorf("%d waiting, want the bound %d", d.preAuthCount, maxPreAuth)
	}
	// Once every source holds one, the oldest of all gives way.
	for _, q := range []*preAuth{first[2], first[3], p} {
		d.forget(q)
	}
	for d.preAuthCount < maxPreAuth {
		d.admit(conn(fmt.Sprintf("198.18.3.%d", d.preAuthCount)))
	}
	d.admit(conn("198.18.4.1"))
	if !others[0].displaced.Load() || others[1].displaced.Load() {
		t.Errorf("every source at one: the oldest displaced %v, the next %v; want only the oldest", others[0].displaced.Load(), others[1].displaced.Load())
	}
	for _, q := range d.preAuth {
		for _, x := range q {
			d.forget(x)
		}
	}
	if d.preAuthCount != 0 || len(d.preAuth) != 0 {
		t.Errorf("after forgetting every one: %d counted, %d sources", d.preAuthCount, len(d.preAuth))
	}
}
