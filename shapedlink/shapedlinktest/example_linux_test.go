package shapedlinktest_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
)

func TestMain(m *testing.M) { shapedlinktest.Main(m) }

// An HTTP exchange over an 80 ms link: the server listens in the link's
// server namespace, the client dials from the client namespace, and the
// request takes the link's round trip (one for the handshake, one for the
// request).
func TestHTTPOverTheLink(t *testing.T) {
	link := shapedlinktest.New(t, "80:10")
	ctx := context.Background()
	addr := net.JoinHostPort(link.ServerAddr().String(), "8080")
	ln, err := link.Server().Listen(ctx, "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello across the link")
	})}
	go srv.Serve(ln)
	defer srv.Close()

	client := &http.Client{Transport: &http.Transport{DialContext: link.Client().DialContext}}
	defer client.CloseIdleConnections()
	start := time.Now()
	resp, err := client.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	if err != nil || string(body) != "hello across the link" {
		t.Fatalf("body %q, %v", body, err)
	}
	if took < 160*time.Millisecond {
		t.Errorf("the request took %v: less than the two 80 ms round trips it needs, so it did not cross the link", took)
	}
}

// A UDP exchange: ListenPacket in each namespace, one datagram each way.
func TestUDPOverTheLink(t *testing.T) {
	link := shapedlinktest.New(t, "20:10")
	ctx := context.Background()
	srv, err := link.Server().ListenPacket(ctx, "udp", net.JoinHostPort(link.ServerAddr().String(), "9000"))
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	go func() {
		buf := make([]byte, 1500)
		n, from, err := srv.ReadFrom(buf)
		if err == nil {
			srv.WriteTo(buf[:n], from)
		}
	}()
	c, err := link.Client().DialContext(ctx, "udp", srv.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	if _, err := c.Write([]byte("ping")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	n, err := c.Read(buf)
	if err != nil || string(buf[:n]) != "ping" {
		t.Fatalf("echo %q, %v", buf[:n], err)
	}
	if rtt := time.Since(start); rtt < 20*time.Millisecond {
		t.Errorf("round trip %v on a 20 ms link", rtt)
	}
}

// The sockets really are in the namespaces: the client namespace cannot
// reach a listener in this process's own namespace.
func TestSocketsStayInTheirNamespace(t *testing.T) {
	link := shapedlinktest.New(t, "10:100")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if c, err := link.Client().DialContext(ctx, "tcp", ln.Addr().String()); err == nil {
		c.Close()
		t.Fatal("the client namespace reached a listener outside it")
	}
}
