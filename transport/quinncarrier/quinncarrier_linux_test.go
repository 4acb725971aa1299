package quinncarrier

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/gsocheck"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
	"github.com/shakenfist/quicbench/transport"
)

func TestMain(m *testing.M) { shapedlinktest.Main(m) }

// needBinary builds the program once, or skips the test saying what to
// install.
func needBinary(t *testing.T) {
	t.Helper()
	if _, err := Binary(t.Context()); errors.Is(err, ErrUnavailable) {
		t.Skipf("the quinn carrier cannot be built here (apt-get install cargo librust-quinn-dev librust-rustls-pemfile-dev): %v", err)
	} else if err != nil {
		t.Fatal(err)
	}
}

// payload is n bytes that differ by seed.
func payload(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 58))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// sizes are what channel i sends up (client to server) and down: channel
// 0 a bulk download, so that the controller leaves its initial window.
func sizes(i int) (up, down int) {
	if i == 0 {
		return 32 << 10, 3 << 20
	}
	return (i + 1) * 16 << 10, 24 << 10
}

// targets listens in the server namespace for each channel: a connection
// to channel i's listener reads everything the client sends, reports its
// hash, then sends channel i's download and closes.
func targets(t *testing.T, link *shapedlink.Link, n int) ([]string, <-chan string) {
	t.Helper()
	got := make(chan string, 4*n)
	var addrs []string
	for i := range n {
		ln, err := link.Server().Listen(t.Context(), "tcp", net.JoinHostPort(link.ServerAddr().String(), "0"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		addrs = append(addrs, ln.Addr().String())
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				go func() {
					defer c.Close()
					h := sha256.New()
					nr, err := io.Copy(h, c)
					got <- fmt.Sprintf("ch%d up %d %x %v", i, nr, h.Sum(nil), err)
					_, down := sizes(i)
					_, _ = c.Write(payload(uint64(100+i), down))
				}()
			}
		}()
	}
	return addrs, got
}

// exchange makes one connection per channel through the carrier, sends
// each channel's upload, and checks the download and what the server saw.
func exchange(t *testing.T, link *shapedlink.Link, addrs []string, got <-chan string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, len(addrs))
	for i, a := range addrs {
		wg.Go(func() {
			c, err := link.Client().DialContext(t.Context(), "tcp", a)
			if err != nil {
				errs <- err
				return
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(60 * time.Second))
			up, down := sizes(i)
			if _, err := c.Write(payload(uint64(i), up)); err != nil {
				errs <- fmt.Errorf("ch%d: writing: %w", i, err)
				return
			}
			_ = c.(*net.TCPConn).CloseWrite()
			b, err := io.ReadAll(c)
			if err != nil || !bytes.Equal(b, payload(uint64(100+i), down)) {
				errs <- fmt.Errorf("ch%d: read %d bytes (%v), want the %d sent", i, len(b), err, down)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	want := map[string]bool{}
	for i := range addrs {
		up, _ := sizes(i)
		want[fmt.Sprintf("ch%d up %d %x <nil>", i, up, sha256.Sum256(payload(uint64(i), up)))] = true
	}
	for range addrs {
		select {
		case g := <-got:
			if !want[g] {
				t.Errorf("the server saw %q, not one of the uploads sent", g)
			}
			delete(want, g)
		case <-time.After(10 * time.Second):
			t.Fatalf("the server saw %d uploads, not %d", len(addrs)-len(want), len(addrs))
		}
	}
}

// priorities are the channels' stream priorities in these tests: the
// interactive channel's raised, as the priority arm will.
var priorities = []int{0, 7, 0, 0, 0}

// pair is a running server end and client end.
type pair struct{ server, client *End }

// startBoth starts the server end in link's server namespace, listening
// on listen and connecting channel i to targets[i], then the client end in
// its client namespace towards it. Each end runs under its namespace's
// own init.
func startBoth(ctx context.Context, c Config, link *shapedlink.Link, listen string, targets []string) (*pair, error) {
	if err := c.checkServer(listen, targets); err != nil {
		return nil, err
	}
	cert, err := NewCertificate()
	if err != nil {
		return nil, err
	}
	p := &pair{}
	if p.server, err = startServer(ctx, c, link.Server(), listen, targets, cert); err != nil {
		return nil, err
	}
	if p.client, err = startClient(ctx, c, link.Client(), p.server.ready.QUIC, "", len(targets), cert.ClientOnly()); err != nil {
		p.server.kill()
		return nil, err
	}
	return p, nil
}

// stop stops both ends and reads back what each recorded.
func (p *pair) stop() (server, client EndStats, err error) {
	client, cerr := p.client.Stop()
	server, serr := p.server.Stop()
	return server, client, errors.Join(cerr, serr)
}

func startCarrier(t *testing.T, link *shapedlink.Link, cc, seg string) (*pair, []string, <-chan string) {
	t.Helper()
	addrs, got := targets(t, link, 5)
	car, err := startBoth(t.Context(), Config{Controller: cc, Segmentation: seg, Priorities: priorities, Dir: t.TempDir()},
		link, net.JoinHostPort(link.ServerAddr().String(), "0"), addrs)
	if err != nil {
		t.Fatal(err)
	}
	return car, car.client.ready.Channels, got
}

// checkSettings fails t unless s is the reference's pinning with cc.
func checkSettings(t *testing.T, who string, s Settings, cc string) {
	t.Helper()
	if s.CC != cc || s.Controller != cc {
		t.Errorf("%s: asked for %s, quinn made %q (flag %q)", who, cc, s.Controller, s.CC)
	}
	if s.Datagram != 1400 || s.PMTUD || s.ConnectionWindow != 16<<20 || s.StreamWindow != 8<<20 || s.TLS != "1.3" {
		t.Errorf("%s: settings %+v, want datagram 1400 without PMTUD, windows 16 MB and 8 MB, TLS 1.3", who, s)
	}
	if !slices.Equal(s.Priorities, priorities) {
		t.Errorf("%s: stream priorities %v, want %v", who, s.Priorities, priorities)
	}
	if s.InitialWindow == 0 || s.Quinn == "" || s.Quinn == "unknown" {
		t.Errorf("%s: no initial window (%d) or quinn version (%q) recorded", who, s.InitialWindow, s.Quinn)
	}
}

// TestFiveChannelsEachController carries five channels both ways over a
// shaped link with each controller, and checks what both ends recorded and
// that every packet on the wire was wire-sized.
func TestFiveChannelsEachController(t *testing.T) {
	needBinary(t)
	for _, cc := range Controllers() {
		t.Run(cc, func(t *testing.T) {
			link := shapedlinktest.New(t, "20:40")
			shapedlinktest.RequireNoGSO(t, link)
			car, addrs, got := startCarrier(t, link, cc, "")
			sready, cready := car.server.ready, car.client.ready
			checkSettings(t, "server ready", sready.Settings, cc)
			checkSettings(t, "client ready", cready.Settings, cc)
			if c := cready.Connection; c == nil || c.Controller != cc || c.InitialWindow != cready.Settings.InitialWindow {
				t.Errorf("the client's connection runs %+v, want %s with initial window %d", c, cc, cready.Settings.InitialWindow)
			}
			exchange(t, link, addrs, got)
			srv, cli, err := car.stop()
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range []EndStats{srv, cli} {
				checkSettings(t, e.Role+" stats", e.Settings, cc)
				if len(e.Connections) != 1 || e.Connections[0].Controller != cc {
					t.Errorf("%s: connections %+v, want one on %s", e.Role, e.Connections, cc)
				}
				if e.Ended != "SIGTERM" {
					t.Errorf("%s ended %q, want SIGTERM", e.Role, e.Ended)
				}
				if e.Socket.MaxDatagram > 1400 || e.Socket.Datagrams < e.Connections[0].UDPTx.Datagrams {
					t.Errorf("%s: socket %+v for %d datagrams quinn sent: a datagram over 1400 bytes, or datagrams not written one by one",
						e.Role, e.Socket, e.Connections[0].UDPTx.Datagrams)
				}
				for i, ch := range e.Channels {
					if ch.Streams != 1 {
						t.Errorf("%s: channel %d had %d streams, want 1", e.Role, i, ch.Streams)
					}
				}
			}
			for i, ch := range cli.Channels {
				up, down := sizes(i)
				if ch.BytesFromTCP != uint64(up) || ch.BytesToTCP != uint64(down) {
					t.Errorf("the client end carried %+v on channel %d, want %d up and %d down", ch, i, up, down)
				}
			}
			if s := srv.Socket; s.MaxDatagram != 1400 {
				t.Errorf("the server end's largest datagram was %d bytes, want 1400 (a bulk download fills them)", s.MaxDatagram)
			}
			t.Logf("%s: server %+v; connection %+v", cc, srv.Socket, srv.Connections[0])
			if g := egress(t, link); g.Verdict != gsocheck.Off {
				t.Errorf("the bench's offload check on the server end's egress: %s (%s), want off", g.Verdict, g.Reason)
			}
		})
	}
}

// egress is the bench's offload check on the server end's egress counters.
func egress(t *testing.T, link *shapedlink.Link) gsocheck.Result {
	t.Helper()
	c, err := link.Instruments().EgressCounters(shapedlink.ServerEnd)
	if err != nil {
		t.Fatal(err)
	}
	return gsocheck.FromCounters(gsocheck.Counters{Packets: c.All.Packets, Bytes: c.All.Bytes, Oversize: c.Oversize.Packets},
		gsocheck.Expected(transport.DatagramSize, gsocheck.VethL2), 100)
}

// TestOffloadControl lets quinn keep its offload batches, and checks that
// the bench's offload check sees them: the check that passes the carrier
// above can fail.
func TestOffloadControl(t *testing.T) {
	needBinary(t)
	link := shapedlinktest.New(t, "20:40")
	car, addrs, got := startCarrier(t, link, "cubic", "kernel")
	exchange(t, link, addrs, got)
	srv, _, err := car.stop()
	if err != nil {
		t.Fatal(err)
	}
	if srv.Socket.Batches == 0 || srv.Socket.QuinnGSOSegments <= 1 {
		t.Fatalf("quinn sent no offload batch (%+v): this kernel does not offer UDP_SEGMENT, so the control shows nothing", srv.Socket)
	}
	if g := egress(t, link); g.Verdict != gsocheck.On {
		t.Errorf("quinn sent %d offload batches, and the bench's check says %s (%s), want on", srv.Socket.Batches, g.Verdict, g.Reason)
	}
}

// TestKillLeavesNothing kills both ends and checks that no process of
// theirs is left, that no process holds either end's namespace (so the
// veths go with the link), and that nothing but the certificate is in the
// run's directory.
func TestKillLeavesNothing(t *testing.T) {
	needBinary(t)
	shapedlinktest.Need(t)
	p, err := shapedlink.ParseProfile("20:40")
	if err != nil {
		t.Fatal(err)
	}
	// Built here, not by shapedlinktest.New, because the test closes it.
	link, err := shapedlink.New(t.Context(), p, shapedlink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer link.Close()
	dir := t.TempDir()
	addrs, _ := targets(t, link, 5)
	car, err := startBoth(t.Context(), Config{Controller: "bbr", Dir: dir}, link, net.JoinHostPort(link.ServerAddr().String(), "0"), addrs)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(processesWith(t, dir)); n != 2 {
		t.Fatalf("%d quicbench-quinn processes run with %s, want 2 (the test cannot see them)", n, dir)
	}
	var inodes []uint64
	for _, ns := range []*shapedlink.Namespace{link.Server(), link.Client()} {
		ino, err := ns.Inode()
		if err != nil {
			t.Fatal(err)
		}
		inodes = append(inodes, ino)
	}
	car.client.kill()
	car.server.kill()
	if left := processesWith(t, dir); len(left) > 0 {
		t.Errorf("processes left after Kill: %v", left)
	}
	if err := link.Close(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Second)
	for held := namespaceHolders(t, inodes); len(held) > 0; held = namespaceHolders(t, inodes) {
		if time.Now().After(deadline) {
			t.Errorf("after Kill and the link's Close, processes still hold the link's namespaces (and so its veths): %v", held)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "quinn-") {
			t.Errorf("the run's directory holds %s after a kill; only the certificate files were expected", e.Name())
		}
	}
}

// processesWith lists the processes running the quicbench-quinn program
// whose arguments name dir (not the namespaces' inits, which run this
// test's binary).
func processesWith(t *testing.T, dir string) []string {
	t.Helper()
	bin, err := Binary(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	pids, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range pids {
		exe, err := os.Readlink(p + "/exe")
		if err != nil || exe != bin {
			continue
		}
		b, err := os.ReadFile(p + "/cmdline")
		if err == nil && strings.Contains(string(b), dir) {
			out = append(out, filepath.Base(p)+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

// namespaceHolders lists the processes in a network namespace of inodes.
func namespaceHolders(t *testing.T, inodes []uint64) []string {
	t.Helper()
	var out []string
	links, _ := filepath.Glob("/proc/[0-9]*/ns/net")
	for _, l := range links {
		target, err := os.Readlink(l)
		if err != nil {
			continue
		}
		for _, ino := range inodes {
			if target == fmt.Sprintf("net:[%d]", ino) {
				out = append(out, l)
			}
		}
	}
	return out
}

// TestStartFailsClearly gives the server end a listen address the program
// refuses, and checks that StartServer says why and leaves nothing running.
func TestStartFailsClearly(t *testing.T) {
	needBinary(t)
	dir := t.TempDir()
	cert, err := NewCertificate()
	if err != nil {
		t.Fatal(err)
	}
	_, err = StartServer(context.Background(), Config{Controller: "cubic", Dir: dir}, nil, "127.0.0.1:notaport", []string{"127.0.0.1:1"}, cert)
	if err == nil || !strings.Contains(err.Error(), "--listen") {
		t.Fatalf("StartServer with a bad listen address: %v, want the program's complaint about --listen", err)
	}
	if left := processesWith(t, dir); len(left) > 0 {
		t.Errorf("processes left after a failed StartServer: %v", left)
	}
}
