package shapedlinktest_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
	"github.com/shakenfist/quicbench/transport"
)

// recordingTB is a test as New and RequireNoGSO see it, with what they
// log and report kept, and their cleanups run when the caller says.
type recordingTB struct {
	testing.TB
	mu       sync.Mutex
	logs     []string
	errs     []string
	cleanups []func()
}

func (r *recordingTB) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *recordingTB) Logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}
func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// finish runs the cleanups, last registered first, as testing does.
func (r *recordingTB) finish() {
	for len(r.cleanups) > 0 {
		f := r.cleanups[len(r.cleanups)-1]
		r.cleanups = r.cleanups[:len(r.cleanups)-1]
		f()
	}
}

// A real quic-go transfer over a shapedlinktest link. With quic-go on
// plain sockets its super-packets cross the link, and the end of the test
// says so (New logs a line naming transport.WithoutGSO, RequireNoGSO fails
// the test); with the sockets wrapped by transport.WithoutGSO no packet
// longer than one wire packet leaves either end and nothing is said.
func TestCleanupReportsGSOSuperPackets(t *testing.T) {
	if os.Getenv("QUIC_GO_DISABLE_GSO") != "" {
		t.Skip("QUIC_GO_DISABLE_GSO is set: quic-go cannot send super-packets")
	}
	for _, wrap := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "WithoutGSO"}[wrap], func(t *testing.T) {
			rec := &recordingTB{TB: t}
			t.Cleanup(rec.finish) // if the test stops early
			link := shapedlinktest.New(rec, "20:50")
			shapedlinktest.RequireNoGSO(rec, link)
			spc, cpc := linkSockets(t, link, wrap)
			serverGSO := quicBulk(t, spc, cpc, 4<<20)
			var oversize [2]uint64
			for i, e := range []shapedlink.End{shapedlink.ServerEnd, shapedlink.ClientEnd} {
				c, err := link.Instruments().EgressCounters(e)
				if err != nil {
					t.Fatal(err)
				}
				oversize[i] = c.Oversize.Packets
			}
			rec.finish()
			t.Logf("oversize packets: server end %d, client end %d; logged %q; errors %q", oversize[0], oversize[1], rec.logs, rec.errs)
			if wrap {
				if serverGSO || oversize != [2]uint64{} {
					t.Errorf("with WithoutGSO: quic-go reports GSO %v and %v packets longer than one wire packet left the ends", serverGSO, oversize)
				}
				if len(rec.logs) != 0 || len(rec.errs) != 0 {
					t.Errorf("with no super-packets the cleanup said: logs %q, errors %q", rec.logs, rec.errs)
				}
				return
			}
			if !serverGSO {
				t.Skip("quic-go did not use GSO here (kernel without UDP_SEGMENT?): nothing for the cleanup to report")
			}
			if oversize[0] == 0 {
				t.Fatal("quic-go reports GSO but no super-packet left the server end")
			}
			want := fmt.Sprintf("%d of the ", oversize[0])
			if len(rec.logs) != 1 || !strings.Contains(rec.logs[0], want) || !strings.Contains(rec.logs[0], "left the server end") ||
				!strings.Contains(rec.logs[0], "transport.WithoutGSO") || !strings.Contains(rec.logs[0], "RequireNoGSO") {
				t.Errorf("New's cleanup logged %q: want one line counting %q super-packets from the server end and naming transport.WithoutGSO", rec.logs, want)
			}
			if len(rec.errs) != 1 || !strings.HasPrefix(rec.errs[0], "shapedlinktest.RequireNoGSO: ") || !strings.Contains(rec.errs[0], want) {
				t.Errorf("RequireNoGSO reported %q: want one error counting the super-packets", rec.errs)
			}
		})
	}
}

// linkSockets makes a UDP socket in each of the link's namespaces, wrapped
// by transport.WithoutGSO when wrap is set.
func linkSockets(t *testing.T, link *shapedlink.Link, wrap bool) (server, client net.PacketConn) {
	t.Helper()
	ctx := context.Background()
	var pcs []net.PacketConn
	for _, ns := range []struct {
		listen func(context.Context, string, string) (net.PacketConn, error)
		addr   string
	}{
		{link.Server().ListenPacket, link.ServerAddr().String()},
		{link.Client().ListenPacket, link.ClientAddr().String()},
	} {
		pc, err := ns.listen(ctx, "udp", net.JoinHostPort(ns.addr, "0"))
		if err != nil {
			t.Fatal(err)
		}
		if wrap {
			w, err := transport.WithoutGSO(pc)
			if err != nil {
				pc.Close()
				t.Fatal(err)
			}
			pc = w
		}
		t.Cleanup(func() { pc.Close() })
		pcs = append(pcs, pc)
	}
	return pcs[0], pcs[1]
}

// quicBulk sends n bytes from a quic-go server on serverPC to a quic-go
// client on clientPC, as code driving quic-go itself would, and returns
// whether the server's connection reported GSO in use.
func quicBulk(t *testing.T, serverPC, clientPC net.PacketConn, n int64) (serverGSO bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cert, err := transport.NewCertificate()
	if err != nil {
		t.Fatal(err)
	}
	serverTLS, clientTLS, err := cert.TLSConfigs("bulk-test")
	if err != nil {
		t.Fatal(err)
	}
	str := &quic.Transport{Conn: serverPC}
	defer str.Close()
	ln, err := str.Listen(serverTLS, &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	gso := make(chan bool, 1)
	go func() {
		defer close(gso)
		conn, err := ln.Accept(ctx)
		if err != nil {
			return
		}
		st, err := conn.OpenUniStreamSync(ctx)
		if err == nil {
			_, err = io.CopyN(st, zeros{}, n)
			_ = st.Close()
		}
		if err != nil {
			t.Errorf("server: %v", err)
		}
		gso <- conn.ConnectionState().GSO
		<-conn.Context().Done() // the client closes once it has read it all
	}()
	ctr := &quic.Transport{Conn: clientPC}
	defer ctr.Close()
	conn, err := ctr.Dial(ctx, serverPC.LocalAddr(), clientTLS, &quic.Config{})
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	st, err := conn.AcceptUniStream(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := io.Copy(io.Discard, st); err != nil || got != n {
		t.Fatalf("client read %d of %d bytes: %v", got, n, err)
	}
	_ = conn.CloseWithError(0, "done")
	return <-gso
}

type zeros struct{}

func (zeros) Read(b []byte) (int, error) { clear(b); return len(b), nil }

// Fatalf records like Errorf and stops the calling goroutine, as testing's
// does; callers run what may call it on a goroutine of their own.
func (r *recordingTB) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	runtime.Goexit()
}

// quic-go with its GSO on, over an emulated link that keeps the ends'
// offloads: its super-packets reach the shaper, which loses datagrams at
// the configured share (each wire segment judged on its own); the end of
// the test reports nothing, since super-packets are what such a link
// carries, and RequireNoGSO refuses the link outright.
func TestKeepOffloadQUICWithGSO(t *testing.T) {
	if os.Getenv("QUIC_GO_DISABLE_GSO") != "" {
		t.Skip("QUIC_GO_DISABLE_GSO is set: quic-go cannot send super-packets")
	}
	rec := &recordingTB{TB: t}
	t.Cleanup(rec.finish)
	link := shapedlinktest.New(rec, "2:1000:1", shapedlink.Options{Backend: shapedlink.BackendEmulator, Offload: shapedlink.OffloadKeep, Seed: 7})
	refused := make(chan struct{})
	go func() {
		defer close(refused)
		shapedlinktest.RequireNoGSO(rec, link)
	}()
	<-refused
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "OffloadKeep") {
		t.Errorf("RequireNoGSO on a link keeping offloads reported %q; want it refused, naming OffloadKeep", rec.errs)
	}
	rec.errs = nil
	spc, cpc := linkSockets(t, link, false)
	serverGSO := quicBulk(t, spc, cpc, 16<<20)
	st, ok := link.Instruments().ShaperStats()
	if !ok {
		t.Fatal("no shaper statistics on an emulated link")
	}
	d := st.Directions[0]
	t.Logf("quic-go GSO %v; server->client: received %d, loss %d, super-packets in %d out %d", serverGSO, d.Received, d.LossDrops, d.SuperPacketsIn, d.SuperPacketsOut)
	if serverGSO && d.SuperPacketsIn == 0 {
		t.Error("quic-go used GSO but no super-packet reached the shaper")
	}
	n, p := float64(d.Received), 0.01
	mean, sd := n*p, math.Sqrt(n*p*(1-p))
	if lo, hi := mean-3.29*sd, mean+3.29*sd; float64(d.LossDrops) < lo || float64(d.LossDrops) > hi {
		t.Errorf("lost %d of %d datagrams, outside [%.0f, %.0f] for 1%%", d.LossDrops, d.Received, lo, hi)
	}
	rec.finish()
	if len(rec.logs) != 0 || len(rec.errs) != 0 {
		t.Errorf("the end of a test on a link keeping offloads said: logs %q, errors %q", rec.logs, rec.errs)
	}
}
