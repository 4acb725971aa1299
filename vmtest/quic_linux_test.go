package vmtest

import (
	"context"
	"io"
	"net/netip"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/gsocheck"
	"github.com/shakenfist/quicbench/transport"
)

// TestNetemQUICGSO runs the offload check on the QUIC arm of package
// transport over a netem link, both ways. The server streams bulk data to
// the client on one channel for three seconds while the server end's netem
// queue is sampled.
//
//   - gso_off_wrapper: transport's default (AllowGSO false), which wraps the
//     UDP socket so every send carries one datagram. Every queue slot must
//     hold at most one 1400-byte datagram (1442 bytes): verdict off, and the
//     connection must report no GSO.
//   - gso_allowed_control: AllowGSO true, with tx checksum offload turned
//     back on for the server's veth (shapedlink pins it off, and without it
//     quic-go's first segmented send fails and it falls back to one datagram
//     per send). quic-go then sends with UDP_SEGMENT: verdict on. This arm
//     shows the check can tell the difference on quic-go's own traffic.
func TestNetemQUICGSO(t *testing.T) {
	cert, err := transport.NewCertificate()
	if err != nil {
		t.Fatal(err)
	}
	want := gsocheck.Expected(transport.DatagramSize, 14)
	for i, tc := range []struct {
		name     string
		allowGSO bool
		verdict  gsocheck.Verdict
	}{{"gso_off_wrapper", false, gsocheck.Off}, {"gso_allowed_control", true, gsocheck.On}} {
		t.Run(tc.name, func(t *testing.T) {
			l := newLink(t, "40:10")
			if tc.allowGSO {
				if err := l.Do(serverEnd, func() error { return setTxChecksum(l.Dev(serverEnd), true) }); err != nil {
					t.Fatalf("turning tx checksum offload back on for the control: %v", err)
				}
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			addr := netip.AddrPortFrom(l.Addr(serverEnd), uint16(7800+i)).String()
			opts := transport.Options{Channels: 1, Certificate: cert, AllowGSO: tc.allowGSO}
			var ln *transport.Listener
			if err := l.Do(serverEnd, func() error {
				var err error
				ln, err = transport.Listen(ctx, transport.ArmQUIC, addr, opts)
				return err
			}); err != nil {
				t.Fatalf("transport.Listen: %v", err)
			}
			defer ln.Close()
			accepted := make(chan *transport.Session, 1)
			go func() {
				s, err := ln.Accept(ctx)
				if err != nil {
					t.Errorf("Accept: %v", err)
				}
				accepted <- s
			}()
			copts := opts
			copts.Certificate = transport.Certificate{CertPEM: cert.CertPEM}
			var cli *transport.Session
			if err := l.Do(clientEnd, func() error {
				var err error
				cli, err = transport.Dial(ctx, transport.ArmQUIC, addr, copts)
				return err
			}); err != nil {
				t.Fatalf("transport.Dial: %v", err)
			}
			defer cli.Close()
			srv := <-accepted
			if srv == nil {
				t.FailNow()
			}
			defer srv.Close()

			go func() { _, _ = io.Copy(io.Discard, cli.Channels()[0]) }()
			before, err := l.Instruments().EgressCounters(serverEnd)
			if err != nil {
				t.Fatal(err)
			}
			stop := startSampler(t, l, serverEnd, 2*time.Millisecond)
			buf := make([]byte, 64<<10)
			deadline := time.Now().Add(3 * time.Second)
			var sent int64
			for time.Now().Before(deadline) {
				n, err := srv.Channels()[0].Write(buf)
				sent += int64(n)
				if err != nil {
					t.Fatalf("writing the bulk channel: %v", err)
				}
			}
			samples := stop()
			st := srv.State()
			gsoUsed := false
			for _, q := range st.QUIC {
				gsoUsed = gsoUsed || q.GSO
				t.Logf("server connection: GSO %v, largest 1-RTT packet %d, oversize packets %d, packets sent %d, lost %d",
					q.GSO, q.MaxShortHeaderPacket, q.OversizePackets, q.Stats.PacketsSent, q.Stats.PacketsLost)
			}
			t.Logf("%s: wrote %d bytes in 3s", tc.name, sent)
			checkSlots(t, tc.name, samples, want, tc.verdict == gsocheck.On)
			after, err := l.Instruments().EgressCounters(serverEnd)
			if err != nil {
				t.Fatal(err)
			}
			c := gsocheck.Counters{
				Packets:  after.All.Packets - before.All.Packets,
				Bytes:    after.All.Bytes - before.All.Bytes,
				Oversize: after.Oversize.Packets - before.Oversize.Packets,
			}
			cr := gsocheck.FromCounters(c, want, 100)
			t.Logf("%s: egress counters: %d packets, %d bytes, %d oversize; verdict %s", tc.name, c.Packets, c.Bytes, c.Oversize, cr.Verdict)
			if cr.Verdict != tc.verdict {
				t.Errorf("egress-counter verdict %s, want %s (%s)", cr.Verdict, tc.verdict, cr.Reason)
			}
			if gsoUsed != tc.allowGSO {
				t.Errorf("quic-go reports GSO %v, want %v", gsoUsed, tc.allowGSO)
			}
		})
	}
}
