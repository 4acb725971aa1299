package shapedlinktest_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
	"github.com/shakenfist/quicbench/transport"
)

// simPacketSize is the QUIC packet size of these tests: quic-go's
// default, 1280 bytes, and not the arms' 1400. quic-go v0.65's pacer
// keeps 1280 as its datagram size whatever the configured one, while its
// congestion controller uses the configured one; with a larger one,
// whenever the pacing budget lies between the two sizes, the connection's
// loop finds it may not send and yet need not wait, and goes round again
// at once until time moves on. In real time that is a spin of some tens of
// microseconds; in a synctest bubble time never moves while a goroutine
// runs, so it never ends.
const simPacketSize = 1280

// quicTransfer is one run of a quic-go bulk transfer over an in-process
// link in virtual time: the link's per-packet trace, what arrived and
// how long it took on the bubble's clock.
type quicTransfer struct {
	trace    string
	received int64
	took     time.Duration
	counters [2]shapedlink.ShaperStats
}

// runQUIC moves size bytes from a quic-go server to its client over
// Sim(profile) seeded with seed, in a synctest bubble under Deterministic
// (one P, crypto/rand seeded, the collector stopped), so that the two
// ends behave the same every run.
func runQUIC(t *testing.T, profile string, seed uint64, size int64) quicTransfer {
	var out quicTransfer
	t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			shapedlinktest.Deterministic(t, 1)
			var mu sync.Mutex
			var lines [2][]string
			link := shapedlinktest.Sim(t, profile, shapedlink.Options{Seed: seed, PacketTrace: func(e shapedlink.PacketEvent) {
				mu.Lock()
				lines[e.Dir] = append(lines[e.Dir], e.String())
				mu.Unlock()
			}})
			out.received, out.took = transfer(t, link, size)
			st, _ := link.Instruments().ShaperStats()
			out.counters = [2]shapedlink.ShaperStats(st.Directions)
			mu.Lock()
			out.trace = "down\n" + strings.Join(lines[shapedlink.Down], "\n") + "\nup\n" + strings.Join(lines[shapedlink.Up], "\n")
			mu.Unlock()
		})
	})
	return out
}

// transfer runs the server and the client and returns what the client
// read and how long it took, from its dial to the stream's end.
func transfer(t *testing.T, link *shapedlink.Link, size int64) (int64, time.Duration) {
	ctx := context.Background()
	cert, err := transport.NewCertificate(link.ServerAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	serverTLS, clientTLS, err := cert.TLSConfigs("bulk")
	if err != nil {
		t.Fatal(err)
	}
	conf := &quic.Config{InitialPacketSize: simPacketSize, DisablePathMTUDiscovery: true, MaxIdleTimeout: 10 * time.Second}
	spc, err := link.Server().ListenPacket(ctx, "udp", ":4433")
	if err != nil {
		t.Fatal(err)
	}
	cpc, err := link.Client().ListenPacket(ctx, "udp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	str, ctr := &quic.Transport{Conn: spc}, &quic.Transport{Conn: cpc}
	defer ctr.Close()
	defer str.Close()
	ln, err := str.Listen(serverTLS, conf)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- serve(ctx, ln, size) }()
	start := time.Now()
	conn, err := ctr.Dial(ctx, spc.LocalAddr(), clientTLS, conf)
	if err != nil {
		t.Fatal(err)
	}
	st, err := conn.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Write([]byte{1}); err != nil {
		t.Fatal(err)
	}
	n, err := io.Copy(io.Discard, st)
	took := time.Since(start)
	if err != nil {
		t.Fatalf("after %d bytes: %v", n, err)
	}
	_ = conn.CloseWithError(0, "done")
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	return n, took
}

// serve accepts one connection and stream, writes size bytes on it and
// waits for the client to close the connection.
func serve(ctx context.Context, ln *quic.Listener, size int64) error {
	conn, err := ln.Accept(ctx)
	if err != nil {
		return err
	}
	st, err := conn.AcceptStream(ctx)
	if err != nil {
		return err
	}
	if _, err := st.Read(make([]byte, 1)); err != nil {
		return err
	}
	if _, err := io.CopyN(st, zeroReader{}, size); err != nil {
		return err
	}
	if err := st.Close(); err != nil {
		return err
	}
	<-conn.Context().Done()
	var ae *quic.ApplicationError
	if err := context.Cause(conn.Context()); !errors.As(err, &ae) {
		return fmt.Errorf("the connection ended with %v, not the client's close", err)
	}
	return nil
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestSimQUICDeterministic: a quic-go transfer over a lossy, jittery
// in-process link, run twice in virtual time with the same seeds, gives
// the same per-packet trace byte for byte and takes the same virtual
// time; with another link seed the trace differs. The transfer arrives
// whole, and at about the rate the link allows (NewReno at 1% loss
// cannot fill it, and cannot beat it).
func TestSimQUICDeterministic(t *testing.T) {
	const profile, size = "80:10:1,jitter=5/normal", 2 << 20
	a := runQUIC(t, profile, 7, size)
	b := runQUIC(t, profile, 7, size)
	if a.received != size {
		t.Fatalf("the client read %d bytes, want %d", a.received, size)
	}
	if a.trace != b.trace || a.took != b.took {
		al, bl := strings.Split(a.trace, "\n"), strings.Split(b.trace, "\n")
		for i := range min(len(al), len(bl)) {
			if al[i] != bl[i] {
				t.Fatalf("two runs part at trace line %d of %d:\n%s\n%s", i+1, len(al), al[i], bl[i])
			}
		}
		t.Fatalf("two runs differ: %d and %d trace lines, %v and %v", len(al), len(bl), a.took, b.took)
	}
	down := a.counters[0]
	goodput := float64(size) * 8 / a.took.Seconds() / 1e6
	t.Logf("%d bytes in %v of virtual time (%.2f Mbit/s); down: %d forwarded, %d lost, %d trace lines",
		size, a.took, goodput, down.Forwarded, down.LossDrops, strings.Count(a.trace, "\n"))
	if down.LossDrops == 0 || !strings.Contains(a.trace, " lost") {
		t.Error("nothing was lost on a 1% loss link: the test does not test what it is for")
	}
	if goodput > 10 || goodput < 1 {
		t.Errorf("goodput %.2f Mbit/s over a 10 Mbit/s link", goodput)
	}
	if c := runQUIC(t, profile, 8, size); c.trace == a.trace {
		t.Error("another link seed gave the same trace")
	}
}

// TestSimRefusesTCP: the in-process link carries datagrams only; a
// stream is refused with the reason, wrapping errors.ErrUnsupported.
func TestSimRefusesTCP(t *testing.T) {
	link := shapedlinktest.Sim(t, "80:10")
	_, err := link.Server().Listen(context.Background(), "tcp", ":0")
	if !errors.Is(err, errors.ErrUnsupported) || !strings.Contains(err.Error(), "datagrams only") {
		t.Errorf("Listen(tcp) = %v, want a refusal wrapping errors.ErrUnsupported", err)
	}
	if a := link.Applied(); !strings.HasPrefix(a[0], "server -> client: inproc delay 40ms") {
		t.Errorf("Applied() = %q", a)
	}
}

// TestSimOptions: Sim refuses another backend or more than one Options.
func TestSimOptions(t *testing.T) {
	for _, c := range []struct {
		opts []shapedlink.Options
		says string
	}{
		{[]shapedlink.Options{{Backend: shapedlink.BackendEmulator}}, "use shapedlinktest.New"},
		{[]shapedlink.Options{{}, {}}, "at most one Options"},
	} {
		ft := &fatalT{}
		func() {
			defer func() { _ = recover() }()
			shapedlinktest.Sim(ft, "80:10", c.opts...)
		}()
		if !strings.Contains(ft.msg, c.says) {
			t.Errorf("Sim(%+v) failed with %q, want it to say %q", c.opts, ft.msg, c.says)
		}
	}
}

// fatalT records a Fatalf and stops the helper there, as testing.T does.
type fatalT struct {
	testing.TB
	msg string
}

func (f *fatalT) Helper() {}
func (f *fatalT) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(f)
}

// TestSimRequireNoGSO: RequireNoGSO has nothing to check on an in-process
// link, whose sockets cannot do GSO, and does not fail the test for lack
// of egress counters.
func TestSimRequireNoGSO(t *testing.T) {
	ok := t.Run("sim", func(t *testing.T) {
		shapedlinktest.RequireNoGSO(t, shapedlinktest.Sim(t, "80:10"))
	})
	if !ok {
		t.Error("RequireNoGSO failed a test over an in-process link")
	}
}
