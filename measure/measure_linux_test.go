package measure_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
	"github.com/shakenfist/quicbench/stats"
	"github.com/shakenfist/quicbench/transport"
)

func TestMain(m *testing.M) { shapedlinktest.Main(m) }

// Each arm over a real 20 ms, 10 Mbit/s link: the run succeeds with no
// channel error at either end (so the ends closed in an order that lost
// nothing), and what it reports is what the link allows: no round trip
// and no connect faster than the link's 20 ms, goodput above zero and not
// above the rate.
func TestArmOverLink(t *testing.T) {
	const rtt, rateMbit = 20 * time.Millisecond, 10.0
	for _, name := range measure.ArmNames() {
		arm := measure.Arm(name)
		if strings.HasPrefix(name, "test-") || strings.HasPrefix(name, "example-") || name == "tcp-own" {
			continue // this package's tests' own arms, run elsewhere
		}
		t.Run(arm.Name(), func(t *testing.T) {
			if strings.HasPrefix(name, "quinn") {
				needQuinn(t)
			}
			link := shapedlinktest.New(t, "20:10")
			shapedlinktest.RequireNoGSO(t, link)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cfg := shortWorkload()
			r, err := measure.Run(ctx, measure.OverLink(link), arm, cfg)
			if err != nil {
				t.Fatal(err)
			}
			if r.Repeat.Failed != "" || r.ServerError != "" {
				t.Errorf("a run without error has Failed %q, ServerError %q", r.Repeat.Failed, r.ServerError)
			}
			if r.Client == nil || r.Server == nil || r.ClientState == nil || r.ServerState == nil {
				t.Fatalf("missing results: client %v server %v states %v %v", r.Client != nil, r.Server != nil, r.ClientState != nil, r.ServerState != nil)
			}
			if len(r.Client.Errors) > 0 || len(r.Server.Errors) > 0 {
				t.Errorf("channel errors: client %v, server %v", r.Client.Errors, r.Server.Errors)
			}
			if string(r.ClientState.Arm) != arm.Name() || r.ClientState.Role != "client" || r.ServerState.Role != "server" {
				t.Errorf("states: %s %s and %s", r.ClientState.Arm, r.ClientState.Role, r.ServerState.Role)
			}
			if ct := r.ClientState.ConnectTime; ct < rtt {
				t.Errorf("connect time %v, less than the link's %v round trip", ct, rtt)
			}
			measured := r.Client.Measured()
			if len(measured) == 0 || len(r.Repeat.Samples) != len(r.Client.Samples) || r.Repeat.Timeouts != r.Client.Timeouts {
				t.Fatalf("%d measured samples; Repeat has %d samples of %d, %d timeouts of %d",
					len(measured), len(r.Repeat.Samples), len(r.Client.Samples), r.Repeat.Timeouts, r.Client.Timeouts)
			}
			for _, s := range measured {
				if s.RTT < rtt {
					t.Fatalf("a round trip of %v, less than the link's %v", s.RTT, rtt)
				}
			}
			// A window can start with a little already buffered, so allow
			// a tenth over the rate.
			if g := r.Repeat.ThroughputMbit; g <= 0 || g > rateMbit*1.1 || g != r.Client.BulkMbps {
				t.Errorf("goodput %.2f Mbit/s (client %.2f) on a %.0f Mbit/s link", g, r.Client.BulkMbps, rateMbit)
			}
			for _, q := range append(r.ClientState.QUIC, r.ServerState.QUIC...) {
				if q.GSO {
					t.Errorf("a QUIC connection used GSO: %+v", q.Socket)
				}
			}
			if _, err := stats.SummariseRepeat(r.Repeat, cfg.Warmup); err != nil {
				t.Errorf("the Repeat does not summarise: %v", err)
			}
		})
	}
}

// A run that cannot be made fails with the reason (here the QUIC
// handshake, with the client's UDP dropped), and the reason travels: into
// Repeat.Failed and from there into the error of a cell of such repeats.
func TestArmFailureSaysWhy(t *testing.T) {
	link := shapedlinktest.New(t, "20:10")
	if _, err := link.Control().BlockUDP(shapedlink.ClientEnd); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := shortWorkload()
	r, err := measure.Run(ctx, measure.OverLink(link), measure.QUIC, cfg, transport.Options{HandshakeTimeout: time.Second})
	if err == nil {
		t.Fatal("a QUIC run with UDP blocked succeeded")
	}
	if !strings.Contains(err.Error(), "client: dial") || !strings.Contains(err.Error(), "QUIC handshake") {
		t.Errorf("err %q does not say the client's dial failed in the handshake", err)
	}
	if r.Repeat.Failed != err.Error() || r.ClientState != nil || r.Client != nil {
		t.Errorf("Repeat.Failed %q, client state %v, client result %v", r.Repeat.Failed, r.ClientState, r.Client)
	}
	_, cerr := stats.SummariseCell([]stats.Repeat{r.Repeat, r.Repeat}, cfg.Warmup)
	if !errors.Is(cerr, stats.ErrNoRepeats) || !strings.Contains(cerr.Error(), "QUIC handshake") {
		t.Errorf("the cell's error %q does not carry the run's reason", cerr)
	}
}
