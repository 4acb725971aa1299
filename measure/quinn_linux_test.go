package measure_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
	"github.com/shakenfist/quicbench/transport"
	"github.com/shakenfist/quicbench/transport/quinncarrier"
)

// needQuinn builds the quinn carrier once, or skips the test saying what
// to install.
func needQuinn(t *testing.T) string {
	t.Helper()
	bin, err := quinncarrier.Binary(t.Context())
	if errors.Is(err, quinncarrier.ErrUnavailable) {
		t.Skipf("the quinn arms need the quicbench-quinn program (docs/quinn.md): %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
	return bin
}

// carriedGoodputMax bounds a carried arm's goodput, in Mbit/s, over the
// tests' 10 Mbit/s link and 1.5 s window: bytes the carrier's client end
// held at the window's start are read inside it when the host is busy
// (11.2 seen under go test ./...), while bytes that bypassed the link
// would come at loopback rates.
const carriedGoodputMax = 15

// running counts this process's children running bin (other packages'
// tests, run beside this one by go test, start ends of their own).
func running(t *testing.T, bin string) int {
	t.Helper()
	return len(quinnEnds(t, bin, os.Getpid()))
}

// The quinn arm over a 20 ms, 10 Mbit/s link with the run's controller:
// both ends record quinn's controller as read back, offload off, 1400-byte
// datagrams and the priority the arm sets, and its connection's statistics
// at exit; the round trips and goodput are the link's; and no end is left
// running.
func TestQuinnOverLink(t *testing.T) {
	bin := needQuinn(t)
	for _, c := range []struct {
		arm      measure.Arm
		cc, want string
		caCert   bool
	}{{measure.Quinn, "", "quinn-cubic", false}, {measure.Quinn, "bbr", "quinn-bbr", true}, {measure.QuinnPriority, "reno", "quinn-newreno", false}} {
		t.Run(c.arm.Name()+"-"+c.want, func(t *testing.T) {
			var err error
			before := running(t, bin)
			link := shapedlinktest.New(t, "20:10")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			o := transport.Options{CongestionControl: c.cc}
			if c.caCert { // as the bench's rig gives every arm
				if o.Certificate, err = transport.NewCertificate(link.ServerAddr().String()); err != nil {
					t.Fatal(err)
				}
			}
			r, err := measure.Run(ctx, measure.OverLink(link), c.arm, shortWorkload(), o)
			if err != nil {
				t.Fatal(err)
			}
			if r.ClientState == nil || r.ServerState == nil || r.Client == nil {
				t.Fatal("a run without error lacks a state or the client's result")
			}
			for _, st := range []*transport.State{r.ClientState, r.ServerState} {
				if st.CongestionControl != c.want || len(st.QUIC) != 1 {
					t.Fatalf("%s: controller %q with %d connections, want %q and 1", st.Role, st.CongestionControl, len(st.QUIC), c.want)
				}
				q := st.QUIC[0]
				if q.GSO || q.ConfiguredPacketSize != 1400 || q.PathMTUDiscovery || q.CongestionControl == "" {
					t.Errorf("%s: GSO %v, datagram %d, PMTUD %v, quinn's controller %q", st.Role, q.GSO, q.ConfiguredPacketSize, q.PathMTUDiscovery, q.CongestionControl)
				}
				if q.Stats.PacketsSent == 0 || q.Stats.SmoothedRTT < 20*time.Millisecond {
					t.Errorf("%s: the end's exit stats say %d packets sent, RTT %v", st.Role, q.Stats.PacketsSent, q.Stats.SmoothedRTT)
				}
				if (st.Priority != nil) != (c.arm == measure.QuinnPriority) {
					t.Errorf("%s: priority %+v on the %s arm", st.Role, st.Priority, c.arm)
				}
			}
			measured := r.Client.Measured()
			if len(measured) == 0 {
				t.Fatal("no measured round trips")
			}
			for _, s := range measured {
				if s.RTT < 20*time.Millisecond {
					t.Fatalf("a round trip of %v, less than the link's 20 ms", s.RTT)
				}
			}
			if g := r.Repeat.ThroughputMbit; g < 1 || g > carriedGoodputMax {
				t.Errorf("goodput %.2f Mbit/s on a 10 Mbit/s link", g)
			}
			if n := running(t, bin); n != before {
				t.Errorf("%d quinn ends running after the run, %d before", n, before)
			}
			t.Logf("%s %s: %d round trips, goodput %.2f Mbit/s, quinn controller %s", c.arm, c.want, len(measured), r.Repeat.ThroughputMbit, r.ClientState.QUIC[0].CongestionControl)
		})
	}
}

// The quic-carrier arm over a 20 ms, 10 Mbit/s link: the channels are
// carried by quic-go with the quic arm's settings (one connection, offload
// off, 1400-byte datagrams), and the bulk bytes the client read came over
// that connection's UDP, not over TCP past it.
func TestQUICCarrierOverLink(t *testing.T) {
	link := shapedlinktest.New(t, "20:10")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r, err := measure.Run(ctx, measure.OverLink(link), measure.Arm("quic-carrier"), shortWorkload(), transport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.ClientState == nil || r.ServerState == nil || r.Client == nil {
		t.Fatal("a run without error lacks a state or the client's result")
	}
	for _, st := range []*transport.State{r.ClientState, r.ServerState} {
		if st.Arm != "quic-carrier" || st.Channels != 5 || len(st.QUIC) != 1 {
			t.Fatalf("%s: arm %q, %d channels, %d QUIC connections; want quic-carrier, 5 and 1", st.Role, st.Arm, st.Channels, len(st.QUIC))
		}
		q := st.QUIC[0]
		if q.GSO || q.ConfiguredPacketSize != 1400 || q.PathMTUDiscovery || q.CongestionControl == "" || q.QUICVersion == "" || len(q.Channels) != 5 {
			t.Errorf("%s: GSO %v, datagram %d, PMTUD %v, controller %q, version %q, channels %v",
				st.Role, q.GSO, q.ConfiguredPacketSize, q.PathMTUDiscovery, q.CongestionControl, q.QUICVersion, q.Channels)
		}
	}
	got, bulk := r.ClientState.QUIC[0].Stats.BytesReceived, r.Client.BulkBytesTotal
	if bulk < 100_000 || got < uint64(bulk) {
		t.Errorf("the client read %d bulk bytes and its QUIC connection received %d bytes: the channels did not go over QUIC", bulk, got)
	}
	for _, s := range r.Client.Measured() {
		if s.RTT < 20*time.Millisecond {
			t.Fatalf("a round trip of %v, less than the link's 20 ms", s.RTT)
		}
	}
	if g := r.Repeat.ThroughputMbit; g < 1 || g > carriedGoodputMax {
		t.Errorf("goodput %.2f Mbit/s on a 10 Mbit/s link", g)
	}
	t.Logf("quic-carrier: %d round trips, goodput %.2f Mbit/s, %d bulk bytes, %d bytes received over QUIC",
		len(r.Client.Measured()), r.Repeat.ThroughputMbit, bulk, got)
}
