package shapedlink

import (
	"context"
	"net"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// bulkWithProbes runs one Cubic flow from the server end to the client
// end for warm+probe, and during the last probe of it sends UDP echoes
// from the server end (down behind the flow, back up), one at a time. It
// returns the echoes' round trips, the flow's goodput over the probe
// window in Mbit/s, and how many of its segments the sender learnt were
// delivered with CE (tcpi_delivered_ce). ecn turns on net.ipv4.tcp_ecn in
// both namespaces.
func bulkWithProbes(t *testing.T, l *Link, warm, probe time.Duration, ecn bool) ([]time.Duration, float64, uint32) {
	t.Helper()
	if ecn {
		for _, ns := range []*Namespace{l.Server(), l.Client()} {
			if err := ns.Do(func() error { return os.WriteFile("/proc/sys/net/ipv4/tcp_ecn", []byte("1"), 0) }); err != nil {
				t.Fatalf("turning on tcp_ecn in the %s namespace: %v", ns.Role(), err)
			}
		}
	}
	var ln net.Listener
	if err := l.Client().Do(func() (err error) {
		ln, err = net.Listen("tcp4", l.ClientAddr().String()+":0")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var received atomic.Int64
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 64<<10)
		for {
			n, err := c.Read(buf)
			received.Add(int64(n))
			if err != nil {
				return
			}
		}
	}()
	var conn net.Conn
	if err := l.Server().Do(func() (err error) {
		d := net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
			var serr error
			if err := rc.Control(func(fd uintptr) {
				serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, "cubic")
			}); err != nil {
				return err
			}
			return serr
		}}
		conn, err = d.Dial("tcp4", ln.Addr().String())
		return err
	}); err != nil {
		t.Fatalf("dialling with Cubic: %v", err)
	}
	defer conn.Close()
	stop := make(chan struct{})
	go func() {
		buf := make([]byte, 64<<10)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := conn.Write(buf); err != nil {
				return
			}
		}
	}()
	defer close(stop)
	time.Sleep(warm)
	srv, cli := udpPair(t, l)
	start, before := time.Now(), received.Load()
	var rtts []time.Duration
	for time.Since(start) < probe {
		// The longest an answered echo can take here is the round trip
		// plus a full drop-tail queue (110 frames at 10 Mbit/s, 130 ms):
		// an echo lost behind the flow is given up after 600 ms, not
		// seconds, so one loss does not eat the probe's time.
		rtt, err := echoRoundTrip(t, srv, cli, 600*time.Millisecond)
		if err != nil {
			continue // lost behind the flow: try again
		}
		rtts = append(rtts, rtt)
	}
	mbit := float64(received.Load()-before) * 8 / time.Since(start).Seconds() / 1e6
	var ce uint32
	rc, err := conn.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	_ = rc.Control(func(fd uintptr) {
		if info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
			ce = info.Delivered_ce
		}
	})
	return rtts, mbit, ce
}

// TestQueueDisciplineEmulator: behind one Cubic flow on 80 ms / 10
// Mbit/s, an echo that shares the down direction waits in netem's
// drop-tail queue of 110 packets for tens of milliseconds; CoDel keeps
// that wait short; FQ-CoDel puts the echo in its own flow queue, ahead of
// the bulk flow's backlog, so it sees the bare 80 ms. With ecn=on and
// ECN-capable TCP, CoDel marks instead of dropping. The flow keeps most
// of the rate under every discipline.
func TestQueueDisciplineEmulator(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a bulk flow under three disciplines for about 25 s")
	}
	med := func(d []time.Duration) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[len(s)/2]
	}
	results := map[string]time.Duration{}
	for _, c := range []struct {
		profile, applied string
		ecn              bool
	}{
		{"80:10", "limit 110", false},
		{"80:10,down.qdisc=codel", "qdisc codel limit 1000 target 5ms interval 100ms", false},
		{"80:10,down.qdisc=fq_codel", "qdisc fq_codel limit 10240 flows 1024", false},
		{"80:10,down.qdisc=codel,down.ecn=on", "qdisc codel limit 1000 target 5ms interval 100ms ecn", true},
	} {
		l := newTestLink(t, c.profile, BackendEmulator)
		if a := l.Applied(); !strings.Contains(a[0], c.applied) || strings.Contains(a[1], "qdisc") {
			t.Fatalf("%s: applied %q, want %q on server->client only", c.profile, a, c.applied)
		}
		rtts, mbit, ce := bulkWithProbes(t, l, 3*time.Second, 4*time.Second, c.ecn)
		sh, _ := l.Instruments().ShaperStats()
		d := sh.Directions[0]
		results[c.profile] = med(rtts)
		t.Logf("%s: %d echoes, median %v; flow %.2f Mbit/s, %d segments delivered CE; shaper: %d limit drops, %d queue drops, %d codel drops, %d marks",
			c.profile, len(rtts), med(rtts), mbit, ce, d.LimitDrops, d.QueueDrops, d.CoDelDrops, d.ECNMarks)
		if len(rtts) < 10 || mbit < 6 {
			t.Errorf("%s: %d echoes, flow at %.2f Mbit/s; want a saturating flow and at least 10 echoes", c.profile, len(rtts), mbit)
		}
		// One Cubic flow meets CoDel a handful of times in 6 s.
		if c.ecn && (d.ECNMarks < 2 || d.CoDelDrops >= d.ECNMarks || ce == 0) {
			t.Errorf("%s: %d marks and %d drops, %d segments delivered CE; with ECN-capable TCP CoDel should mark, not drop, and the marks reach the receiver", c.profile, d.ECNMarks, d.CoDelDrops, ce)
		}
		if !c.ecn && d.ECNMarks != 0 {
			t.Errorf("%s: %d marks with ECN off", c.profile, d.ECNMarks)
		}
		l.Close()
	}
	fifo, codel, fq := results["80:10"], results["80:10,down.qdisc=codel"], results["80:10,down.qdisc=fq_codel"]
	if fifo < 100*time.Millisecond {
		t.Errorf("drop-tail: median echo %v; one Cubic flow should hold a standing queue of tens of ms above 80", fifo)
	}
	if codel > fifo-15*time.Millisecond || codel > 110*time.Millisecond {
		t.Errorf("codel: median echo %v against drop-tail's %v; CoDel should keep the queue near its 5 ms target", codel, fifo)
	}
	if fq > 86*time.Millisecond {
		t.Errorf("fq_codel: median echo %v; the echo's own flow queue should see the bare 80 ms", fq)
	}
}

// TestFQCoDelIsolatesEmulator: an unresponsive UDP flow at 1.1 times the
// 10 Mbit/s rate keeps a standing queue that CoDel can only trim (its
// drop rate must climb to a tenth of the arrivals), so an echo sharing
// CoDel's single queue waits behind it; FQ-CoDel hashes the echo into a
// flow queue of its own and serves it ahead of the flood's backlog.
func TestFQCoDelIsolatesEmulator(t *testing.T) {
	if testing.Short() {
		t.Skip("floods the link under two disciplines for about 12 s")
	}
	med := map[string]time.Duration{}
	for _, q := range []string{"codel", "fq_codel"} {
		l := newTestLink(t, "80:10,down.qdisc="+q, BackendEmulator)
		flood, sink := udpPair(t, l)
		stop := make(chan struct{})
		go func() {
			// 1400-byte datagrams, 10 every 10 ms: 11.2 Mbit/s of UDP
			// payload, more on the wire.
			msg := make([]byte, 1400)
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				for i := 0; i < 10; i++ {
					_, _ = flood.WriteToUDP(msg, sink.LocalAddr().(*net.UDPAddr))
				}
			}
		}()
		time.Sleep(3 * time.Second)
		sctx, stopSampling := context.WithCancel(context.Background())
		sampled := make(chan []QueueSample, 1)
		go func() {
			s, _ := l.Instruments().SampleQueue(sctx, ServerEnd, 10*time.Millisecond)
			sampled <- s
		}()
		srv, cli := udpPair(t, l)
		var rtts []time.Duration
		// CoDel drops some echoes too (they share the flood's queue): a
		// short timeout keeps each loss from eating the window.
		for start := time.Now(); time.Since(start) < 4*time.Second; {
			if rtt, err := echoRoundTrip(t, srv, cli, 400*time.Millisecond); err == nil {
				rtts = append(rtts, rtt)
			}
		}
		stopSampling()
		checkFlowSamples(t, q, <-sampled)
		close(stop)
		sh, _ := l.Instruments().ShaperStats()
		slices.Sort(rtts)
		if len(rtts) < 10 {
			t.Fatalf("%s: only %d echoes came back", q, len(rtts))
		}
		med[q] = rtts[len(rtts)/2]
		t.Logf("%s: %d echoes, median %v; shaper: %d codel drops, %d queue drops", q, len(rtts), med[q], sh.Directions[0].CoDelDrops, sh.Directions[0].QueueDrops)
		l.Close()
	}
	if med["codel"] < 88*time.Millisecond {
		t.Errorf("codel: median echo %v; behind an unresponsive flood in one queue it should wait well above 80 ms", med["codel"])
	}
	if med["fq_codel"] > 85*time.Millisecond {
		t.Errorf("fq_codel: median echo %v; in its own flow queue it should see about the bare 80 ms", med["fq_codel"])
	}
}

// checkFlowSamples: behind fq_codel the queue samples carry the fullest
// flow queues, fullest first, and the flood's own queue holds most of
// what is queued in the median sample; behind codel (one queue) they
// carry none.
func checkFlowSamples(t *testing.T, q string, s []QueueSample) {
	t.Helper()
	with := 0
	var top []int
	for _, x := range s {
		if len(x.Flows) == 0 {
			continue
		}
		with++
		sum := 0
		for i, f := range x.Flows {
			sum += f.Packets
			if i > 0 && f.Bytes > x.Flows[i-1].Bytes {
				t.Fatalf("%s: flow samples not fullest first: %+v", q, x.Flows)
			}
		}
		if sum > x.Packets || len(x.Flows) > 8 {
			t.Fatalf("%s: %d flow queues holding %d packets in a sample of %d held: %+v", q, len(x.Flows), sum, x.Packets, x.Flows)
		}
		top = append(top, x.Flows[0].Packets)
	}
	if q != "fq_codel" {
		if with > 0 {
			t.Errorf("%s: %d of %d queue samples carry flow queues; only fq_codel has them", q, with, len(s))
		}
		return
	}
	if len(s) < 100 || with < len(s)*9/10 {
		t.Fatalf("fq_codel: %d of %d queue samples carry flow queues, want nearly all (the flood keeps its queue busy)", with, len(s))
	}
	slices.Sort(top)
	if m := top[len(top)/2]; m < 5 {
		t.Errorf("fq_codel: the fullest flow queue holds a median %d packets; the flood's queue should hold several", m)
	}
	t.Logf("fq_codel: %d samples with flow queues, fullest median %d packets", with, top[len(top)/2])
}
