package shapedlink_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strings"
	"sync"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
)

// A profile's limit defaults to DefaultLimit of its rate and round trip;
// WithLimit sets another, which the short form then carries after "@".
// A profile with no options is Symmetric: each direction is what the
// short form says.
func ExampleDefaultLimit() {
	p, err := shapedlink.ParseProfile("80:10")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p.Limit, p.Limit == shapedlink.DefaultLimit(p.RateMbit, p.RTT), p.Symmetric())
	q := p.WithLimit(100)
	fmt.Println(q, q.Limit <= shapedlink.MaxLimit)

	// Behind a queue discipline the limit is the discipline's, by default
	// the kernel's.
	f, err := shapedlink.ParseProfile("80:10,qdisc=fq_codel")
	if err != nil {
		log.Fatal(err)
	}
	d := f.Direction(shapedlink.Down)
	fmt.Println(d.Queue.Kind, d.Limit == shapedlink.DefaultQueueLimit(d.Queue.Kind), f.Symmetric())
	// Output:
	// 110 true true
	// 80:10@100 true
	// fq_codel true false
}

// A profile that does not parse says which field was wrong and why; a
// tool can show the field beside its own input.
func ExampleProfileError() {
	_, err := shapedlink.ParseProfile("80:10:150")
	var pe *shapedlink.ProfileError
	if errors.As(err, &pe) {
		fmt.Printf("%s: %s\n", pe.Field, pe.Reason)
	}
	// Output:
	// loss_pct: "150" is more than 100%
}

// The option keys a profile takes after its short form, for a tool's
// help text (OptionsHelp has each with what it sets).
func ExampleOptionKeys() {
	fmt.Println(strings.Join(shapedlink.OptionKeys(), " "))
	fmt.Println(strings.HasPrefix(shapedlink.OptionsGrammar, "[down.|up.]{"))
	help := strings.Split(shapedlink.OptionsHelp(), "\n")
	fmt.Println(strings.TrimSpace(help[0]))
	// Output:
	// delay jitter rate loss limit dup reorder corrupt qdisc target interval flows quantum ecn schedule trace cross
	// true
	// delay=one_way_ms
}

// New says why it could not build a link: asked for netem on a kernel
// without it, or where the process may create no namespace.
func ExampleNew_errors() {
	p, err := shapedlink.ParseProfile("80:10:1")
	if err != nil {
		log.Fatal(err)
	}
	link, err := shapedlink.New(context.Background(), p, shapedlink.Options{Backend: shapedlink.BackendNetem})
	switch {
	case errors.Is(err, shapedlink.ErrNoNetem):
		fmt.Println("no netem here: use the emulator (BackendAuto picks it)")
	case errors.Is(err, shapedlink.ErrNoPrivilege):
		fmt.Println("run as root, or call shapedlink.Reexec first thing in main")
	case err != nil:
		log.Fatal(err)
	default:
		defer link.Close()
		fmt.Println(link.Backend())
	}
}

// The in-process link needs no privilege and runs on any system: its ends'
// sockets carry UDP datagrams through the emulator's model, and
// Options.PacketTrace is told each datagram's fate.
func ExampleOptions_packetTrace() {
	p, err := shapedlink.ParseProfile("20:10:10")
	if err != nil {
		log.Fatal(err)
	}
	var mu sync.Mutex
	fates := map[shapedlink.PacketFate]int{}
	link, err := shapedlink.New(context.Background(), p, shapedlink.Options{
		Backend: shapedlink.BackendInProcess,
		Seed:    1,
		PacketTrace: func(e shapedlink.PacketEvent) {
			mu.Lock()
			fates[e.What]++
			mu.Unlock()
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer link.Close()

	ctx := context.Background()
	srv, err := link.Server().ListenPacket(ctx, "udp", link.ServerAddr().String()+":4433")
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	cli, err := link.Client().ListenPacket(ctx, "udp", ":0")
	if err != nil {
		log.Fatal(err)
	}
	defer cli.Close()
	const sent = 30 // under the limit of 35: none is refused for room
	for range sent {
		if _, err := cli.WriteTo([]byte("ping"), srv.LocalAddr()); err != nil {
			log.Fatal(err)
		}
	}
	read := 0
	buf := make([]byte, 64)
	for {
		// The link is quiet well before 200 ms after its last datagram.
		if err := srv.SetReadDeadline(time.Now().Add(200 * time.Millisecond)); err != nil {
			log.Fatal(err)
		}
		if _, _, err := srv.ReadFrom(buf); err != nil {
			break
		}
		read++
	}
	mu.Lock()
	defer mu.Unlock()
	fmt.Printf("read %d of %d\n", read, sent)
	for _, f := range []shapedlink.PacketFate{shapedlink.PacketAccepted, shapedlink.PacketLost, shapedlink.PacketOverLimit, shapedlink.PacketDelivered} {
		fmt.Println(f, fates[f])
	}
	// Output:
	// read 26 of 30
	// accepted 26
	// lost 4
	// over-limit 0
	// delivered 26
}

// The bounds a profile's values keep, for a tool that says them in its
// own help or checks its input before it builds a profile.
func ExampleMaxRTT() {
	fmt.Println("round trip up to", shapedlink.MaxRTT, "rate up to", shapedlink.MaxRateMbit, "Mbit/s")
	fmt.Println("limit up to", shapedlink.MaxLimit, "packets, jitter up to", shapedlink.MaxJitterMs, "ms")
	fmt.Println("schedules up to", shapedlink.MaxScheduleChanges, "changes, traces up to", shapedlink.MaxTraceLines, "lines")
	fmt.Println("smallest non-zero percentage", shapedlink.MinPct)
	// Output:
	// round trip up to 1m0s rate up to 100000 Mbit/s
	// limit up to 1048576 packets, jitter up to 2147 ms
	// schedules up to 100000 changes, traces up to 2500000 lines
	// smallest non-zero percentage 1e-05
}
