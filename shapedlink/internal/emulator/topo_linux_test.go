package emulator

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/internal/proc"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// topo is server ns - veth - shaper ns - veth - client ns, addresses in
// 198.18.0.0/15, with static neighbours so no ARP crosses the shaper.
type topo struct {
	srv, shp, cli netns.NsHandle
	ifA, ifB      string
	srvIP, cliIP  net.IP
}

var topoCounter atomic.Uint32

func needRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to create network namespaces and veth pairs (run as root, as CI does)")
	}
}

// newNS creates a network namespace on a throwaway locked thread.
func newNS(t testing.TB) netns.NsHandle {
	t.Helper()
	type res struct {
		ns  netns.NsHandle
		err error
	}
	c := make(chan res)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies in the new namespace
		ns, err := netns.New()
		c <- res{ns, err}
	}()
	r := <-c
	if r.err != nil {
		t.Fatalf("creating a network namespace: %v", r.err)
	}
	t.Cleanup(func() { r.ns.Close() })
	return r.ns
}

// inNS runs f on a thread inside ns; sockets f creates stay in ns.
func inNS(ns netns.NsHandle, f func() error) error {
	c := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies after f
		if err := netns.Set(ns); err != nil {
			c <- err
			return
		}
		c <- f()
	}()
	return <-c
}

// startIn starts cmd inside ns from the process's permanent starter thread,
// the only thread that is certain to outlive the shaper: its
// PR_SET_PDEATHSIG fires when the thread that forked it exits, and this
// package's tests end other threads (newNS, inNS).
func startIn(ns netns.NsHandle, cmd *exec.Cmd) error {
	return proc.StartInNetns(cmd, int(ns))
}

func newTopo(t testing.TB) *topo {
	t.Helper()
	needRoot(t)
	tp := &topo{srv: newNS(t), shp: newNS(t), cli: newNS(t),
		srvIP: net.IPv4(198, 18, 0, 1).To4(), cliIP: net.IPv4(198, 18, 0, 2).To4()}
	id := fmt.Sprintf("%x%x", os.Getpid()&0xfffff, topoCounter.Add(1))
	tp.ifA, tp.ifB = "qea"+id, "qeb"+id
	srvIf, cliIf := "qes"+id, "qec"+id
	hs, err := netlink.NewHandleAt(tp.srv, unix.NETLINK_ROUTE)
	if err != nil {
		t.Fatal(err)
	}
	defer hs.Close()
	hh, err := netlink.NewHandleAt(tp.shp, unix.NETLINK_ROUTE)
	if err != nil {
		t.Fatal(err)
	}
	defer hh.Close()
	hc, err := netlink.NewHandleAt(tp.cli, unix.NETLINK_ROUTE)
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	mk := func(h *netlink.Handle, name, peer string, peerNS netns.NsHandle) {
		v := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: name, MTU: 1500}, PeerName: peer, PeerNamespace: netlink.NsFd(int(peerNS))}
		if err := h.LinkAdd(v); err != nil {
			t.Fatalf("creating veth %s/%s: %v", name, peer, err)
		}
	}
	mk(hs, srvIf, tp.ifA, tp.shp)
	mk(hc, cliIf, tp.ifB, tp.shp)
	setup := func(h *netlink.Handle, name string, ip net.IP) netlink.Link {
		l, err := h.LinkByName(name)
		if err != nil {
			t.Fatal(err)
		}
		// Wire-sized frames only, as shapedlink configures its veths.
		if err := h.LinkSetGSOMaxSegs(l, 1); err != nil {
			t.Fatalf("gso_max_segs on %s: %v", name, err)
		}
		if ip != nil {
			if err := h.AddrAdd(l, &netlink.Addr{IPNet: &net.IPNet{IP: ip, Mask: net.CIDRMask(24, 32)}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := h.LinkSetUp(l); err != nil {
			t.Fatal(err)
		}
		if lo, err := h.LinkByName("lo"); err == nil {
			_ = h.LinkSetUp(lo)
		}
		l, _ = h.LinkByName(name)
		return l
	}
	ls := setup(hs, srvIf, tp.srvIP)
	lc := setup(hc, cliIf, tp.cliIP)
	setup(hh, tp.ifA, nil)
	setup(hh, tp.ifB, nil)
	neigh := func(h *netlink.Handle, on netlink.Link, ip net.IP, mac net.HardwareAddr) {
		if err := h.NeighAdd(&netlink.Neigh{LinkIndex: on.Attrs().Index, State: netlink.NUD_PERMANENT, IP: ip, HardwareAddr: mac, Family: netlink.FAMILY_V4}); err != nil {
			t.Fatal(err)
		}
	}
	// Frames sent before the kernel has activated a device's qdisc (on
	// carrier up, done asynchronously by linkwatch) are dropped: wait.
	for _, w := range []struct {
		h    *netlink.Handle
		name string
	}{{hs, srvIf}, {hc, cliIf}, {hh, tp.ifA}, {hh, tp.ifB}} {
		for end := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
			l, err := w.h.LinkByName(w.name)
			if err == nil && l.Attrs().OperState == netlink.OperUp {
				break
			}
			if time.Now().After(end) {
				t.Fatalf("%s is not operationally up after 5 s", w.name)
			}
		}
	}
	neigh(hs, ls, tp.cliIP, lc.Attrs().HardwareAddr)
	neigh(hc, lc, tp.srvIP, ls.Attrs().HardwareAddr)
	return tp
}

// shaper starts a shaper for cfg (interfaces filled in) in tp's shaper
// namespace and stops it at cleanup.
func (tp *topo) shaper(t testing.TB, cfg Config) *Monitor {
	t.Helper()
	cfg.IfA, cfg.IfB = tp.ifA, tp.ifB
	cmd, mon, err := Command(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := startIn(tp.shp, cmd); err != nil {
		t.Fatalf("starting the shaper: %v", err)
	}
	t.Cleanup(func() {
		if err := mon.Stop(); err != nil {
			t.Errorf("stopping the shaper: %v", err)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := mon.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	return mon
}

func listenUDP(t testing.TB, ns netns.NsHandle, ip net.IP) *net.UDPConn {
	t.Helper()
	var c *net.UDPConn
	if err := inNS(ns, func() (err error) {
		c, err = net.ListenUDP("udp4", &net.UDPAddr{IP: ip})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// testParentEnv makes the test binary an intermediate parent that starts
// a shaper and waits to be killed (TestShaperDiesWithParent).
const testParentEnv = "QUICBENCH_EMULATOR_TEST_PARENT"

func maybeTestParent() {
	v, ok := os.LookupEnv(testParentEnv)
	if !ok {
		return
	}
	os.Unsetenv(testParentEnv)
	var cfg Config
	if err := json.Unmarshal([]byte(v), &cfg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	cmd, mon, err := Command(cfg)
	if err == nil {
		err = proc.Start(cmd)
	}
	if err == nil {
		err = mon.Ready(context.Background())
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println(cmd.Process.Pid)
	select {}
}
