package shapedlink_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"

	"github.com/shakenfist/quicbench/shapedlink"
)

// net/http over the link: the server listens in the server namespace, the
// client dials from the client namespace through DialContext, which has the
// signature http.Transport wants. Needs root, or shapedlink.Reexec first
// thing in main.
func ExampleNamespace_DialContext() {
	ctx := context.Background()
	p, _ := shapedlink.ParseProfile("80:10:1")
	link, err := shapedlink.New(ctx, p, shapedlink.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer link.Close()

	addr := net.JoinHostPort(link.ServerAddr().String(), "8080")
	ln, err := link.Server().Listen(ctx, "tcp", addr)
	if err != nil {
		log.Fatal(err)
	}
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "hello across the link")
	}))

	client := &http.Client{Transport: &http.Transport{DialContext: link.Client().DialContext}}
	resp, err := client.Get("http://" + addr + "/")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Println(string(body))
}

// A UDP exchange: a packet socket in each namespace, one datagram each way.
func ExampleNamespace_ListenPacket() {
	ctx := context.Background()
	p, _ := shapedlink.ParseProfile("20:10")
	link, err := shapedlink.New(ctx, p, shapedlink.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer link.Close()

	srv, err := link.Server().ListenPacket(ctx, "udp", net.JoinHostPort(link.ServerAddr().String(), "9000"))
	if err != nil {
		log.Fatal(err)
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
		log.Fatal(err)
	}
	defer c.Close()
	c.Write([]byte("ping"))
	buf := make([]byte, 16)
	n, _ := c.Read(buf)
	fmt.Println(string(buf[:n]))
}

// Running an external program on one side of the link: Start forks it inside
// the namespace, so everything it opens is there. (examples/overlink does
// this for a server and a client command, with a record of the link.)
func ExampleNamespace_Start() {
	ctx := context.Background()
	p, _ := shapedlink.ParseProfile("80:10")
	link, err := shapedlink.New(ctx, p, shapedlink.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer link.Close()

	ping := exec.Command("ping", "-c", "3", link.ServerAddr().String())
	ping.Stdout, ping.Stderr = os.Stdout, os.Stderr
	if err := link.Client().Start(ping); err != nil {
		log.Fatal(err)
	}
	if err := ping.Wait(); err != nil {
		log.Fatal(err)
	}
}
