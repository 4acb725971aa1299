package measure_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/transport"
)

// The workload over tcp-mux on loopback: both ends measure in full, and
// each end's state shows one TCP connection (the same one), pinned to
// reno.
func TestTCPMuxRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := shortWorkload()
	r, err := measure.Run(ctx, measure.Loopback(), measure.TCPMux, cfg, transport.Options{CongestionControl: "reno"})
	if err != nil {
		t.Fatal(err)
	}
	if r.ServerError != "" || len(r.Client.Errors) > 0 || len(r.Server.Errors) > 0 {
		t.Fatalf("server error %q, channel errors: client %v, server %v", r.ServerError, r.Client.Errors, r.Server.Errors)
	}
	if len(r.Client.Measured()) == 0 || r.Repeat.ThroughputMbit <= 0 {
		t.Errorf("%d round trips measured, %.1f Mbit/s", len(r.Client.Measured()), r.Repeat.ThroughputMbit)
	}
	c, s := r.ClientState, r.ServerState
	if c.Arm != "tcp-mux" || len(c.TCP) != 1 || len(s.TCP) != 1 || c.TCP[0].Channel != -1 {
		t.Fatalf("client state %+v, server state %+v: want one tcp-mux connection each", c, s)
	}
	if c.TCP[0].LocalAddr != s.TCP[0].RemoteAddr || c.TCP[0].RemoteAddr != s.TCP[0].LocalAddr {
		t.Errorf("the ends' connections differ: %s-%s and %s-%s", c.TCP[0].LocalAddr, c.TCP[0].RemoteAddr, s.TCP[0].RemoteAddr, s.TCP[0].LocalAddr)
	}
	for _, st := range []*transport.State{c, s} {
		if st.CongestionControl != "reno" || st.RequestedCongestionControl != "reno" || st.HostCongestionControl == "" ||
			!st.TCP[0].Options.NoDelay || st.TCP[0].Info.Algorithm != "reno" || st.TCP[0].InfoError != "" {
			t.Errorf("%s state: %s", st.Role, fmt.Sprintf("%+v", *st))
		}
	}
	if c.ConnectTime <= 0 || c.Channels != len(cfg.Channels) {
		t.Errorf("connect time %v, %d channels", c.ConnectTime, c.Channels)
	}
}
