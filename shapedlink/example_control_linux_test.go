package shapedlink_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
)

// Extra loss at one end on top of the profile's, counted, and taken away
// again: the link's own loss stays as the profile says. Needs root, or
// shapedlink.Reexec first thing in main.
func ExampleControl_DropRandom() {
	ctx := context.Background()
	p, _ := shapedlink.ParseProfile("20:10")
	link, err := shapedlink.New(ctx, p, shapedlink.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer link.Close()

	f, err := link.Control().DropRandom(shapedlink.ClientEnd, 5)
	if err != nil {
		log.Fatal(err)
	}
	// ... run the experiment ...
	dropped, err := f.Dropped()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f, "dropped", dropped.Packets, "packets")
	if err := f.Remove(); err != nil {
		log.Fatal(err)
	}
	addrs, err := link.Control().ClientAddrs()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("the client end's addresses:", addrs)
}

// A program of one's own inside an end's namespace, and what the link
// pinned on its devices. Needs root, or shapedlink.Reexec first thing in
// main.
func ExampleNamespace_Run() {
	ctx := context.Background()
	p, _ := shapedlink.ParseProfile("20:10")
	link, err := shapedlink.New(ctx, p, shapedlink.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer link.Close()

	server := link.Namespace(shapedlink.ServerEnd)
	ino, err := server.Inode()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("server namespace", ino, "device", link.Instruments().Device(shapedlink.ServerEnd))
	cmd := exec.Command("ip", "-brief", "address")
	cmd.Stdout = os.Stdout
	if err := server.Run(cmd); err != nil {
		log.Fatal(err)
	}
	for _, o := range link.Instruments().Offload() {
		fmt.Println(o.Namespace, o.Device, "wire-sized:", o.WireSized())
	}
}

// A queue sampled for a second, here the root qdisc of the server end's
// device (with netem, the link's own; any qdisc that keeps statistics
// works). Needs root, or shapedlink.Reexec first thing in main.
func ExampleNewQdiscSampler() {
	ctx := context.Background()
	p, _ := shapedlink.ParseProfile("20:10")
	link, err := shapedlink.New(ctx, p, shapedlink.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer link.Close()

	s, err := shapedlink.NewQdiscSampler(link.Server(), link.Instruments().Device(shapedlink.ServerEnd))
	if err != nil {
		log.Fatal(err)
	}
	sctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	samples, err := s.Run(sctx, 10*time.Millisecond)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(samples), "samples")
}
