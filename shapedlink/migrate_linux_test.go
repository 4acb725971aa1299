package shapedlink

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"
)

// TestClientAddrChange moves the client to a new address and checks, on
// both backends, that the new address is reachable from the server at
// once, that the old one is not once removed, and that the new address
// (now the only one) still works after the original was removed.
func TestClientAddrChange(t *testing.T) {
	for _, b := range []Backend{BackendNone, BackendEmulator} {
		t.Run(string(b), func(t *testing.T) {
			l := newTestLink(t, "10:50", b)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			old := l.ClientAddr()
			na, err := l.Control().AddClientAddr(ctx)
			if err != nil {
				t.Fatalf("AddClientAddr: %v", err)
			}
			if na == old || !netip.MustParsePrefix("198.18.0.0/24").Contains(na) {
				t.Fatalf("AddClientAddr gave %s: want a fresh address in 198.18.0.0/24", na)
			}
			have, err := l.Control().ClientAddrs()
			if err != nil {
				t.Fatal(err)
			}
			if len(have) != 2 || have[0] != old || have[1] != na {
				t.Fatalf("ClientAddrs() = %v, want [%s %s] (original first)", have, old, na)
			}
			srv := openUDP(t, l.Server(), l.ServerAddr())
			oldSock := openUDP(t, l.Client(), old)
			newSock := openUDP(t, l.Client(), na)
			if err := reach(srv, newSock); err != nil {
				t.Fatalf("new address %s unreachable from the server before the old one was removed: %v", na, err)
			}
			if err := reach(srv, oldSock); err != nil {
				t.Fatalf("old address %s unreachable before removal: %v", old, err)
			}

			if err := l.Control().RemoveClientAddr(old); err != nil {
				t.Fatalf("RemoveClientAddr(%s): %v", old, err)
			}
			have, err = l.Control().ClientAddrs()
			if err != nil {
				t.Fatal(err)
			}
			if len(have) != 1 || have[0] != na {
				t.Fatalf("after removing %s, ClientAddrs() = %v, want [%s]: was the secondary promoted?", old, have, na)
			}
			if err := reach(srv, oldSock); err == nil {
				t.Errorf("old address %s still reachable after RemoveClientAddr", old)
			}
			if err := reach(srv, newSock); err != nil {
				t.Errorf("new address %s unreachable after the old one was removed: %v", na, err)
			}
			// The original socket cannot send any more: its source
			// address has left the host.
			if _, err := oldSock.WriteToUDP([]byte("x"), srv.LocalAddr().(*net.UDPAddr)); err == nil {
				t.Errorf("a socket bound to the removed address %s could still send", old)
			} else {
				t.Logf("send from the removed address: %v", err)
			}

			// Misuse is refused with a reason.
			if err := l.Control().RemoveClientAddr(na); err == nil {
				t.Error("removing the client's last address succeeded")
			}
			if err := l.Control().RemoveClientAddr(old); err == nil {
				t.Error("removing an address the client no longer has succeeded")
			}
			if err := l.Control().RemoveClientAddr(l.ServerAddr()); err == nil {
				t.Error("removing the server's address succeeded")
			}
			if err := l.Control().RemoveClientAddr(netip.MustParseAddr("198.19.0.2")); err == nil {
				t.Error("removing an address outside the link succeeded")
			}
		})
	}
}

func openUDP(t *testing.T, ns *Namespace, a netip.Addr) *net.UDPConn {
	t.Helper()
	var c *net.UDPConn
	if err := ns.Do(func() error {
		var err error
		c, err = net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.AddrPortFrom(a, 0)))
		return err
	}); err != nil {
		t.Fatalf("binding UDP to %s in the %s namespace: %v", a, ns.Role(), err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// reach sends a datagram from srv to to and waits up to 1 s for it.
func reach(srv, to *net.UDPConn) error {
	if _, err := srv.WriteToUDP([]byte("ping"), to.LocalAddr().(*net.UDPAddr)); err != nil {
		return err
	}
	buf := make([]byte, 16)
	_ = to.SetReadDeadline(time.Now().Add(time.Second))
	_, _, err := to.ReadFromUDP(buf)
	return err
}
