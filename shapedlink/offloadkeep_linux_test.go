package shapedlink

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkmodel"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
	"golang.org/x/sys/unix"
)

// offloadLink builds an emulator link for profile in offload mode m
// (seeded 42) and closes it when t ends.
func offloadLink(t *testing.T, profile string, m OffloadMode) *Link {
	t.Helper()
	needNamespaces(t)
	p, err := ParseProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l, err := New(ctx, p, Options{Backend: BackendEmulator, Seed: 42, Offload: m, Logger: testLogger(t)})
	if err != nil {
		t.Fatalf("building a %s link with offload mode %q: %v", profile, m, err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return l
}

// waitShaperIdle waits (a minute at most) until direction dir of l's
// emulator holds nothing and its received count has stopped moving, and
// returns its counters then.
func waitShaperIdle(t *testing.T, l *Link, dir int) linkspec.Counters {
	t.Helper()
	mon := l.shaper.(*emuShaper).mon
	last := mon.Snapshot()[dir]
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		st := mon.Snapshot()[dir]
		if st.Packets == 0 && st.Received == last.Received {
			return st
		}
		last = st
	}
	t.Fatalf("the shaper did not go idle: %+v", last)
	return last
}

// TestOffloadModeRefused checks an unknown mode is an error naming both.
func TestOffloadModeRefused(t *testing.T) {
	needNamespaces(t)
	p, _ := ParseProfile("2:100")
	_, err := New(context.Background(), p, Options{Backend: BackendEmulator, Offload: "on"})
	if err == nil || !strings.Contains(err.Error(), `"on"`) || !strings.Contains(err.Error(), `"keep"`) {
		t.Fatalf("New with offload mode \"on\": %v; want an error naming the mode and the choices", err)
	}
}

// TestOffloadKeepTCP sends a TCP stream through an emulated link that
// keeps the ends' offloads, with loss, duplication and corruption: the
// bytes arrive intact (the corruption is caught by the receiver's
// checksum, which the shaper completed before flipping a bit), the
// shaper saw super-packets and sent some on, and its account balances per
// wire segment.
func TestOffloadKeepTCP(t *testing.T) {
	l := offloadLink(t, "2:1000:0.2,dup=0.2,corrupt=0.1", OffloadKeep)
	for _, o := range l.Instruments().Offload() {
		if o.WireSized() || !o.TSO || o.GSOMaxSegs < 2 {
			t.Errorf("offload kept, but %s", o)
		}
	}
	for _, a := range l.Applied() {
		if !strings.Contains(a, "offload keep") {
			t.Errorf("applied line %q does not say the offloads are kept", a)
		}
	}
	if hs, err := l.Instruments().HostState(); err != nil || hs.OffloadMode != OffloadKeep {
		t.Errorf("host state offload mode %q (%v), want keep", hs.OffloadMode, err)
	}
	const total = 24 << 20
	payload := make([]byte, total)
	rand.NewChaCha8([32]byte{1}).Read(payload)
	sent, got := tcpTransfer(t, l, payload)
	if got != sent {
		t.Fatalf("the stream arrived changed: sha256 %x sent, %x received", sent, got)
	}
	st := waitShaperIdle(t, l, 0)
	t.Logf("server->client: received %d forwarded %d loss %d dup %d super-packets in %d out %d, limit %d socket %d send errors %d",
		st.Received, st.Forwarded, st.LossDrops, st.Duplicates, st.SuperPacketsIn, st.SuperPacketsOut, st.LimitDrops, st.SocketDrops, st.SendErrors)
	if st.SuperPacketsIn == 0 || st.SuperPacketsOut == 0 {
		t.Errorf("no super-packets crossed the shaper (in %d, out %d): the offloads were not kept", st.SuperPacketsIn, st.SuperPacketsOut)
	}
	if st.LossDrops == 0 || st.Duplicates == 0 {
		t.Errorf("no loss (%d) or duplicates (%d) over %d segments at 0.2%% each", st.LossDrops, st.Duplicates, st.Received)
	}
	if in, out := st.Received+st.Duplicates, st.Forwarded+st.LossDrops+st.LimitDrops+st.SendErrors+st.OversizeDrops; in != out {
		t.Errorf("received %d + duplicates %d != forwarded %d + loss %d + limit %d + send errors %d + oversize %d",
			st.Received, st.Duplicates, st.Forwarded, st.LossDrops, st.LimitDrops, st.SendErrors, st.OversizeDrops)
	}
	// At least one wire segment per 1448 bytes of the stream crossed.
	if st.Received < total/1448 {
		t.Errorf("received %d wire segments for %d bytes: super-packets were counted as frames", st.Received, total)
	}
}

// tcpTransfer sends payload from the server end to the client end over
// TCP and returns the SHA-256 of what was sent and of what arrived.
func tcpTransfer(t *testing.T, l *Link, payload []byte) (sent, got [32]byte) {
	t.Helper()
	return tcpTransferVia(t, l, l.ClientAddr(), payload, 2*time.Minute)
}

// tcpTransferVia is tcpTransfer to the client end's address to, failing
// the test if the transfer takes longer than limit.
func tcpTransferVia(t *testing.T, l *Link, to netip.Addr, payload []byte, limit time.Duration) (sent, got [32]byte) {
	t.Helper()
	var ln net.Listener
	if err := l.Client().Do(func() error {
		var err error
		ln, err = net.Listen("tcp4", netip.AddrPortFrom(to, 0).String())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	sums := make(chan [32]byte, 1)
	errs := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			errs <- err
			return
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(limit))
		h := sha256.New()
		if _, err := io.Copy(h, c); err != nil {
			errs <- err
			return
		}
		var s [32]byte
		copy(s[:], h.Sum(nil))
		sums <- s
	}()
	var c net.Conn
	if err := l.Server().Do(func() error {
		var err error
		c, err = net.Dial("tcp4", ln.Addr().String())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	c.SetWriteDeadline(time.Now().Add(limit))
	if _, err := c.Write(payload); err != nil {
		t.Fatalf("sending %d bytes (within %v): %v", len(payload), limit, err)
	}
	c.Close()
	select {
	case got = <-sums:
	case err := <-errs:
		t.Fatalf("receiving: %v", err)
	}
	return sha256.Sum256(payload), got
}

// TestOffloadKeepUDPSegmentLoss sends numbered datagrams, 32 to a write
// with UDP_SEGMENT, through emulated links with independent and with
// Gilbert-Elliott loss, in both offload modes. With offloads kept each
// write crosses the shaper as one super-packet; either way the shaper must
// judge every datagram as the model judges a wire packet, in order, so the
// datagrams lost are exactly those the model loses when it is fed the same
// arrivals one by one: the same seed, the same draws, the same bursts.
func TestOffloadKeepUDPSegmentLoss(t *testing.T) {
	for _, profile := range []string{"2:2000:1", "2:2000,loss=ge:1/30"} {
		var lost [2][]int
		for i, m := range []OffloadMode{OffloadWire, OffloadKeep} {
			name := string(m)
			if m == OffloadWire {
				name = "wire"
			}
			t.Run(profile+"/"+name, func(t *testing.T) {
				lost[i] = udpSegmentLoss(t, profile, m)
			})
		}
		if lost[0] != nil && lost[1] != nil && fmt.Sprint(lost[0]) != fmt.Sprint(lost[1]) {
			t.Errorf("%s: the two modes lost different datagrams: wire %v, keep %v", profile, lost[0], lost[1])
		}
	}
}

// udpSegmentLoss runs one link of TestOffloadKeepUDPSegmentLoss and
// returns the indices of the datagrams lost.
func udpSegmentLoss(t *testing.T, profile string, m OffloadMode) []int {
	const (
		size   = 1200
		perMsg = 32
		n      = perMsg * 600
	)
	l := offloadLink(t, profile, m)
	srv, cli := udpPair(t, l)
	bigReadBuffer(t, cli)
	if _, err := echoRoundTrip(t, srv, cli, 2*time.Second); err != nil { // ARP first
		t.Fatal(err)
	}
	before := waitShaperIdle(t, l, 0)
	rc, err := srv.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_UDP, unix.UDP_SEGMENT, size)
	}); err != nil || serr != nil {
		t.Fatalf("setting UDP_SEGMENT: %v %v", err, serr)
	}
	seen := make([]bool, n)
	done := make(chan int)
	go func() {
		buf := make([]byte, 65536)
		got := 0
		for {
			cli.SetReadDeadline(time.Now().Add(2 * time.Second))
			k, _, err := cli.ReadFromUDP(buf)
			if err != nil {
				done <- got
				return
			}
			if k == size {
				if i := binary.BigEndian.Uint32(buf); int(i) < n && !seen[i] {
					seen[i] = true
					got++
				}
			}
		}
	}()
	msg := make([]byte, perMsg*size)
	to := cli.LocalAddr().(*net.UDPAddr)
	for i := 0; i < n; i += perMsg {
		for j := range perMsg {
			binary.BigEndian.PutUint32(msg[j*size:], uint32(i+j))
		}
		if _, err := srv.WriteToUDP(msg, to); err != nil {
			t.Fatalf("write %d: %v", i/perMsg, err)
		}
		time.Sleep(time.Millisecond) // about 300 Mbit/s: far below the rate
	}
	got := <-done
	st := waitShaperIdle(t, l, 0)
	var lost []int
	for i, ok := range seen {
		if !ok {
			lost = append(lost, i)
		}
	}
	t.Logf("%d of %d datagrams lost; shaper: received %d, loss %d, limit %d, socket drops %d, super-packets in %d out %d",
		len(lost), n, st.Received-before.Received, st.LossDrops-before.LossDrops, st.LimitDrops, st.SocketDrops, st.SuperPacketsIn, st.SuperPacketsOut)
	if st.LimitDrops != 0 || st.SocketDrops != 0 || st.SendErrors != 0 {
		t.Fatalf("drops other than the loss (limit %d, socket %d, send errors %d): the pattern cannot be compared", st.LimitDrops, st.SocketDrops, st.SendErrors)
	}
	if d := st.LossDrops - before.LossDrops; d != uint64(n-got) {
		t.Errorf("the shaper lost %d datagrams, the receiver missed %d", d, n-got)
	}
	if keep := m == OffloadKeep; keep != (st.SuperPacketsIn > 0) {
		t.Errorf("offload mode %q, but %d super-packets reached the shaper", m, st.SuperPacketsIn)
	}
	// The model, fed the arrivals the shaper had before the data and then
	// the datagrams one by one, must lose the same ones.
	d := l.dirs[Down]
	d.Seed = 42
	model := linkmodel.New(d, new(linkspec.Counters))
	at := int64(0)
	for range before.Received {
		if _, v := model.Arrive(at, 64); v == linkmodel.Accepted {
			model.Depart(64)
		}
	}
	var want []int
	for i := range n {
		at += int64(time.Microsecond)
		if _, v := model.Arrive(at, 14+20+8+size); v == linkmodel.Accepted {
			model.Depart(14 + 20 + 8 + size)
		} else {
			want = append(want, i)
		}
	}
	if fmt.Sprint(lost) != fmt.Sprint(want) {
		t.Errorf("lost %d datagrams, the model loses %d; first lost %v, the model's first %v", len(lost), len(want), head(lost), head(want))
	}
	// And the share is what was configured, within its 99.9% interval
	// (the model's own stationary loss for Gilbert-Elliott).
	if p := d.LossPct / 100; p > 0 {
		mean, sd := n*p, math.Sqrt(n*p*(1-p))
		if lo, hi := mean-3.29*sd, mean+3.29*sd; float64(len(lost)) < lo || float64(len(lost)) > hi {
			t.Errorf("lost %d of %d, outside [%.0f, %.0f] for %.1f%%", len(lost), n, lo, hi, d.LossPct)
		}
	}
	if len(lost) == 0 {
		t.Errorf("no datagram lost")
	}
	return lost
}

func head(s []int) []int { return s[:min(len(s), 8)] }

// TestUDPSegmentationFeature turns tx-udp-segmentation off and on again
// on a kept-offload end through the generic ethtool feature commands (what
// a link keeping offloads does before Linux 6.2) and reads it back.
func TestUDPSegmentationFeature(t *testing.T) {
	l := offloadLink(t, "2:100", OffloadKeep)
	if err := udpSegmentationOff(l.Server(), serverDev); err != nil {
		t.Fatal(err)
	}
	err := l.Server().Do(func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		if _, err := featureIndex(fd, serverDev, "no-such-feature"); err == nil {
			t.Error("featureIndex found a feature that does not exist")
		}
		on, err := setFeature(fd, serverDev, "tx-udp-segmentation", true)
		if err == nil && !on {
			t.Error("tx-udp-segmentation did not come back on")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
