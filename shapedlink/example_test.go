package shapedlink_test

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/netip"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
)

// Profiles are written rtt_ms:rate_mbit[:loss_pct]; the packet limit
// defaults to one and a half bandwidth-delay products plus ten packets.
func ExampleParseProfile() {
	p, err := shapedlink.ParseProfile("80:10:1")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p, p.RTT/2, p.Limit)
	fmt.Println(p.WithLoss(0))

	_, err = shapedlink.ParseProfile("80:ten")
	fmt.Println(err)
	// Output:
	// 80:10:1 40ms 110
	// 80:10
	// shapedlink: profile "80:ten": rate_mbit "ten" is not a decimal number; want rtt_ms:rate_mbit[:loss_pct][@limit_pkts][,option...], e.g. 80:10 or 80:10:1
}

// Options after the short form set one direction apart: here a home
// line, 50 Mbit/s down and 5 Mbit/s up, with the up direction's limit
// sized to its own rate.
func ExampleProfile_Direction() {
	p, err := shapedlink.ParseProfile("20:50,up.rate=5")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range []shapedlink.Dir{shapedlink.Down, shapedlink.Up} {
		dir := p.Direction(d)
		fmt.Printf("%s: delay %v, %g Mbit/s, limit %d\n", d, dir.Delay, dir.RateMbit, dir.Limit)
	}
	fmt.Println(p.RoundTrip(), p)

	_, err = shapedlink.ParseProfile("20:50,up.slot=5")
	fmt.Println(err)
	// Output:
	// down: delay 10ms, 50 Mbit/s, limit 135
	// up: delay 10ms, 5 Mbit/s, limit 23
	// 20ms 20:50,up.rate=5
	// shapedlink: profile "20:50,up.slot=5": option "up.slot=5" has unknown key "slot"; the keys are delay, jitter, rate, loss, limit, dup, reorder, corrupt, qdisc, target, interval, flows, quantum, ecn, schedule, trace and cross (each may follow down. or up.); see shapedlink.OptionsGrammar
}

// New builds the link; Do runs code inside an end's namespace. Needs root,
// or a call to shapedlink.Reexec first thing in main.
func ExampleNew() {
	ctx := context.Background()
	p, err := shapedlink.ParseProfile("80:10:1")
	if err != nil {
		log.Fatal(err)
	}
	link, err := shapedlink.New(ctx, p, shapedlink.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer link.Close()
	fmt.Println("backend:", link.Backend())
	for _, line := range link.Applied() {
		fmt.Println(line)
	}

	var ln net.Listener
	err = link.Server().Do(func() error {
		ln, err = net.Listen("tcp", netip.AddrPortFrom(link.ServerAddr(), 5201).String())
		return err
	})
	if err != nil {
		log.Fatal(err)
	}
	defer ln.Close()

	// Sample the server's egress queue while something runs.
	sctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	samples, err := link.Instruments().SampleQueue(sctx, shapedlink.ServerEnd, shapedlink.DefaultSampleInterval)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(samples), "queue samples")
}
