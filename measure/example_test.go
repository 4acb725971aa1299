//go:build linux

package measure_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/stats"
	"github.com/shakenfist/quicbench/transport"
)

// One second of the five-channel workload over the QUIC arm on loopback,
// its display channel capped at 10 Mbit/s, summarised as the stats
// package reads a repeat. Over a shaped link, pass measure.OverLink(link)
// instead of measure.Loopback().
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := spicelike.Defaults()
	cfg.Duration, cfg.Warmup, cfg.BulkRateCap = time.Second, 200*time.Millisecond, 10e6

	r, err := measure.Run(ctx, measure.Loopback(), measure.QUIC, cfg)
	if err != nil {
		log.Fatal(err)
	}
	s, err := stats.SummariseRepeat(r.Repeat, cfg.Warmup)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.ClientState.Arm, r.ClientState.CongestionControl)
	fmt.Println("round trips measured:", s.N > 0, "timeouts:", s.Timeouts)
	fmt.Println("GSO:", r.ClientState.QUIC[0].GSO, r.ServerState.QUIC[0].GSO)
	// Output:
	// quic newreno (quic-go, fixed)
	// round trips measured: true timeouts: 0
	// GSO: false false
}

// The tcp arm, pinned to Reno, for the whole default workload across an
// 80 ms, 10 Mbit/s link with 1% loss each way. It needs root, or
// shapedlink.Reexec first thing in main.
func ExampleOverLink() {
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
	r, err := measure.Run(ctx, measure.OverLink(link), measure.TCP, spicelike.Defaults(), transport.Options{CongestionControl: "reno"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.ClientState.CongestionControl, r.Repeat.ThroughputMbit) // reno ...
}

// Lookup takes an arm by the name flags and records give it, and says
// ErrUnknownArm for a name no arm has. QUIC and CellCC say how the matrix
// treats the arm: whether it checks its offload evidence, and whether the
// cell's congestion control is the one it runs.
func ExampleLookup() {
	for _, name := range []measure.Arm{measure.QUICPerChannel, measure.Quinn, measure.QuinnPriority, "tcp-bbr", "quinn-vegas", "sctp"} {
		arm, err := measure.Lookup(string(name))
		if errors.Is(err, measure.ErrUnknownArm) {
			fmt.Println(name, "is no arm")
			continue
		} else if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%s: QUIC %v, the cell's controller %v\n", arm, arm.QUIC(), arm.CellCC())
	}
	// Output:
	// quic-per-channel: QUIC true, the cell's controller false
	// quinn: QUIC true, the cell's controller true
	// quinn-priority: QUIC true, the cell's controller true
	// tcp-bbr: QUIC false, the cell's controller true
	// quinn-vegas is no arm
	// sctp is no arm
}

// The tcp-mux arm for one second on loopback: all five channels over one
// TCP connection, pinned to Reno, which both ends' states show.
func ExampleTCPMux() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := spicelike.Defaults()
	cfg.Duration, cfg.Warmup, cfg.BulkRateCap = time.Second, 200*time.Millisecond, 10e6
	r, err := measure.Run(ctx, measure.Loopback(), measure.TCPMux, cfg, transport.Options{CongestionControl: "reno"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(r.ClientState.Arm, r.ClientState.CongestionControl, len(r.ClientState.TCP), len(r.ServerState.TCP))
	// Output: tcp-mux reno 1 1
}
