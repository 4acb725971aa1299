package inproc_test

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/inproc"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// A link of 5 ms each way at 10 Mbit/s, run in real time (inside a
// testing/synctest bubble the same code runs in virtual time): a datagram
// from the server's end to a socket at the client's, and the trace of
// its two steps, each on its own line.
func ExampleLink() {
	dir := linkspec.Direction{Delay: 5 * time.Millisecond, RateMbit: 10, Limit: 100, Seed: 1}
	events := make(chan inproc.Event, 10)
	l, err := inproc.New(inproc.Config{
		Dirs:  [2]linkspec.Direction{dir, dir},
		Addrs: [2]netip.Addr{netip.MustParseAddr("198.18.0.1"), netip.MustParseAddr("198.18.0.2")},
		Trace: func(e inproc.Event) { events <- e },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	srv, _ := l.ListenPacket(0, "udp", ":0")
	cli, _ := l.ListenPacket(1, "udp", ":4433")
	if _, err := srv.WriteTo([]byte("hello"), cli.LocalAddr()); err != nil {
		fmt.Println(err)
		return
	}
	buf := make([]byte, 1500)
	n, from, _ := cli.ReadFrom(buf)
	fmt.Printf("%s from %v\n", buf[:n], from)
	for range 2 {
		e := <-events
		fmt.Println(e.Dir, e.Seq, e.Size, e.What)
	}
	c := l.Counters(linkspec.Down)
	fmt.Println("forwarded", c.Forwarded, "bytes", c.ForwardedBytes)
	// Output:
	// hello from 198.18.0.1:32768
	// down 1 47 accepted
	// down 1 47 delivered
	// forwarded 1 bytes 47
}
