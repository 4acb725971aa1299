package shapedlink

import (
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// TestOffloadKeepTunnel carries TCP through a VXLAN tunnel between the
// ends of an emulated link that keeps offloads. The emulator cannot cut a
// tunnel's super-packets, so the ends must leave their segmentation to
// the stacks: every wire segment then crosses the link judged on its own,
// none is judged whole, no write fails, and the stream arrives at a fair
// share of the rate. With the tunnel offloads left on, each super-packet
// was judged as one segment and sent whole, which the kernel refused.
func TestOffloadKeepTunnel(t *testing.T) {
	l := offloadLink(t, "10:100", OffloadKeep)
	for _, o := range l.Instruments().Offload() {
		if o.Namespace != "shaper" && len(o.UncutSegmentation) > 0 {
			t.Errorf("offload kept, but segmentation the emulator cannot cut is still on: %s", o)
		}
	}
	overlay := [2]netip.Addr{netip.MustParseAddr("198.19.0.1"), netip.MustParseAddr("198.19.0.2")}
	addVxlan(t, l.Server(), serverDev, l.ServerAddr(), l.ClientAddr(), overlay[0])
	addVxlan(t, l.Client(), clientDev, l.ClientAddr(), l.ServerAddr(), overlay[1])

	const total = 4 << 20
	payload := make([]byte, total)
	rand.NewChaCha8([32]byte{2}).Read(payload)
	start := time.Now()
	// 4 MiB at 100 Mbit/s takes about a third of a second; the limit
	// leaves room for a loaded machine, and a link that judges whole
	// super-packets (0.4 Mbit/s measured) takes minutes.
	sent, got := tcpTransferVia(t, l, overlay[1], payload, time.Minute)
	took := time.Since(start)
	if got != sent {
		t.Fatalf("the stream through the tunnel arrived changed")
	}
	st := waitShaperIdle(t, l, 0)
	t.Logf("%d bytes through the tunnel in %v (%.1f Mbit/s); server->client received %d forwarded %d super-packets in %d, judged whole %d, send errors %d",
		total, took, total*8/took.Seconds()/1e6, st.Received, st.Forwarded, st.SuperPacketsIn, st.JudgedWhole, st.SendErrors)
	if st.JudgedWhole != 0 || st.SendErrors != 0 {
		t.Errorf("%d super-packets judged whole and %d writes failed: the tunnel's super-packets reached the emulator uncut", st.JudgedWhole, st.SendErrors)
	}
	// The tunnel's MTU (1450) leaves at most 1410 bytes of the stream a
	// segment.
	if st.Received < total/1410 {
		t.Errorf("received %d wire segments for %d bytes through the tunnel: super-packets were counted as segments", st.Received, total)
	}
}

// TestOffloadKeepJudgedWhole turns the tunnel offloads back on at the
// server end after New, so the emulator reads VXLAN super-packets it
// cannot cut: each is judged whole and counted as such, and the account
// still balances.
func TestOffloadKeepJudgedWhole(t *testing.T) {
	l := offloadLink(t, "10:100", OffloadKeep)
	overlay := [2]netip.Addr{netip.MustParseAddr("198.19.0.1"), netip.MustParseAddr("198.19.0.2")}
	addVxlan(t, l.Server(), serverDev, l.ServerAddr(), l.ClientAddr(), overlay[0])
	addVxlan(t, l.Client(), clientDev, l.ClientAddr(), l.ServerAddr(), overlay[1])
	if err := l.Server().Do(func() error {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return err
		}
		defer unix.Close(fd)
		_, err = setFeatures(fd, serverDev, uncutSegmentation, true)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var ln net.Listener
	if err := l.Client().Do(func() error {
		var err error
		ln, err = net.Listen("tcp4", netip.AddrPortFrom(overlay[1], 0).String())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			_, _ = io.Copy(io.Discard, c)
			c.Close()
		}
	}()
	var c net.Conn
	if err := l.Server().Do(func() error {
		var err error
		c, err = net.Dial("tcp4", ln.Addr().String())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// The stream stalls on super-packets the kernel refuses to send
	// whole; two seconds of it is enough to see them.
	c.SetWriteDeadline(time.Now().Add(2 * time.Second))
	_, _ = c.Write(make([]byte, 4<<20))
	c.Close()
	st := waitShaperIdle(t, l, 0)
	t.Logf("server->client: received %d forwarded %d judged whole %d send errors %d", st.Received, st.Forwarded, st.JudgedWhole, st.SendErrors)
	if st.JudgedWhole == 0 {
		t.Errorf("no super-packet counted as judged whole, with the tunnel offloads on at the sender")
	}
	if in, out := st.Received+st.Duplicates, st.Forwarded+st.LossDrops+st.LimitDrops+st.SendErrors+st.OversizeDrops; in != out {
		t.Errorf("received %d + duplicates %d != forwarded %d + loss %d + limit %d + send errors %d + oversize %d",
			st.Received, st.Duplicates, st.Forwarded, st.LossDrops, st.LimitDrops, st.SendErrors, st.OversizeDrops)
	}
}

// addVxlan makes a VXLAN device in ns over the end's device dev (address
// local, the other end's remote) and gives it address addr/24.
func addVxlan(t *testing.T, ns *Namespace, dev string, local, remote, addr netip.Addr) {
	t.Helper()
	h, err := ns.handle()
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	under, err := h.LinkByName(dev)
	if err != nil {
		t.Fatal(err)
	}
	vx := &netlink.Vxlan{LinkAttrs: netlink.LinkAttrs{Name: "qbvx0", MTU: 1450}, VxlanId: 42,
		VtepDevIndex: under.Attrs().Index, SrcAddr: local.AsSlice(), Group: remote.AsSlice(), Port: 4789}
	if err := h.LinkAdd(vx); err != nil {
		t.Skipf("cannot make a VXLAN device in the %s namespace (kernel without VXLAN?): %v", ns.role, err)
	}
	link, err := h.LinkByName("qbvx0")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.AddrAdd(link, &netlink.Addr{IPNet: &net.IPNet{IP: addr.AsSlice(), Mask: net.CIDRMask(24, 32)}}); err != nil {
		t.Fatal(err)
	}
	if err := h.LinkSetUp(link); err != nil {
		t.Fatal(err)
	}
}
