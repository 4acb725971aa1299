// Package outside is a user's module that imports shapedlink and measure as
// any other module would (through a replace directive to this checkout), to
// prove the link and the workload can be embedded from outside the project.
package outside

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
	"github.com/shakenfist/quicbench/spicelike"
)

func TestMain(m *testing.M) { shapedlinktest.Main(m) }

func TestHTTPOverALink(t *testing.T) {
	link := shapedlinktest.New(t, "40:10:1")
	addr := net.JoinHostPort(link.ServerAddr().String(), "8080")
	ln, err := link.Server().Listen(context.Background(), "tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "from outside") }))
	client := &http.Client{Transport: &http.Transport{DialContext: link.Client().DialContext}}
	start := time.Now()
	resp, err := client.Get("http://" + addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "from outside" {
		t.Fatalf("body %q", b)
	}
	if took := time.Since(start); took < 80*time.Millisecond {
		t.Errorf("the request took %v, less than two 40 ms round trips: it did not cross the link", took)
	}
}

func TestWorkloadOverALink(t *testing.T) {
	link := shapedlinktest.New(t, "40:10:1")
	shapedlinktest.RequireNoGSO(t, link)
	cfg := spicelike.Defaults()
	cfg.Duration, cfg.Warmup = time.Second, 200*time.Millisecond
	r, err := measure.Run(context.Background(), measure.OverLink(link), measure.QUIC, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Client.Measured()) == 0 {
		t.Error("no round trip measured")
	}
}
