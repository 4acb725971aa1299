package shapedlink

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
)

// addTbf puts a 10 Mbit/s tbf with a 64 KB queue on end e.
func addTbf(t testing.TB, l *Link, e End) {
	t.Helper()
	h, err := l.ns(e).handle()
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	link, err := h.LinkByName(l.dev(e))
	if err != nil {
		t.Fatal(err)
	}
	q := &netlink.Tbf{
		QdiscAttrs: netlink.QdiscAttrs{LinkIndex: link.Attrs().Index, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT},
		Rate:       10e6 / 8, Limit: 64 << 10, Buffer: 1600,
	}
	// Buffer is in ticks for the kernel; 1600 bytes at 10 Mbit/s.
	q.Buffer = uint32(float64(1600) / float64(q.Rate) * 1e6 * netlink.TickInUsec())
	if err := h.QdiscAdd(q); err != nil {
		t.Fatalf("adding tbf: %v", err)
	}
}

// blast sends datagrams of size bytes from srv to cli for d.
func blast(srv, cli *net.UDPConn, size int, d time.Duration) {
	to := cli.LocalAddr().(*net.UDPAddr)
	buf := make([]byte, size)
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		for i := 0; i < 50; i++ {
			srv.WriteToUDP(buf, to)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// checkBacklog runs the sampler during a blast and checks it saw a queue
// of whole 1442-byte frames build up.
func checkBacklog(t *testing.T, s *Sampler, srv, cli *net.UDPConn) []QueueSample {
	t.Helper()
	go drain(cli, 500*time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	done := make(chan struct{})
	go func() { blast(srv, cli, 1400, 250*time.Millisecond); close(done) }()
	samples, err := s.Run(ctx, time.Millisecond)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	// 300 ms at 1 ms is 300 polls on an idle machine, but a poll (a
	// netlink dump for a qdisc) can take several milliseconds on a loaded
	// one, under the race detector. Ask only for enough samples for the
	// checks below to mean something.
	t.Logf("%d samples in 300 ms at 1 ms", len(samples))
	if len(samples) < 20 {
		t.Errorf("%d samples in 300 ms at 1 ms, want at least 20", len(samples))
	}
	busy, maxPkts, torn := 0, 0, 0
	for _, q := range samples {
		if q.Packets >= 2 {
			busy++
			if q.Bytes != q.Packets*(1400+8+20+14) {
				torn++
				t.Logf("sample %+v: %d bytes for %d packets, not 1442 per packet", q, q.Bytes, q.Packets)
			}
		}
		maxPkts = max(maxPkts, q.Packets)
	}
	// The emulator's two gauges are separate words; allow a rare sample
	// caught between their updates, never a pattern.
	if torn > 1+busy/100 {
		t.Errorf("%d of %d busy samples do not hold whole 1442-byte frames", torn, busy)
	}
	t.Logf("%d samples, %d with a backlog of two or more, deepest %d packets, last %+v", len(samples), busy, maxPkts, samples[len(samples)-1])
	if busy < len(samples)/4 {
		t.Errorf("only %d of %d samples saw a backlog under a 10 Mbit/s bottleneck", busy, len(samples))
	}
	return samples
}

func TestSamplerTbfBacklog(t *testing.T) {
	l := newTestLink(t, "1:100", BackendNone)
	addTbf(t, l, ServerEnd)
	srv, cli := udpPair(t, l)
	s, err := NewQdiscSampler(l.Server(), l.Instruments().Device(ServerEnd))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	samples := checkBacklog(t, s, srv, cli)
	if last := samples[len(samples)-1]; last.Drops == 0 {
		t.Errorf("the tbf's 64 KB queue overflowed under a 200 Mbit/s offered load, but the sampler counted no drops: %+v", last)
	}
}

func TestSamplerEmulatorBacklog(t *testing.T) {
	l := newTestLink(t, "10:10@20", BackendEmulator)
	srv, cli := udpPair(t, l)
	s, err := l.Instruments().Sampler(ServerEnd)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	samples := checkBacklog(t, s, srv, cli)
	last := samples[len(samples)-1]
	if last.LimitDrops == 0 || last.LossDrops != 0 || last.Drops < last.LimitDrops {
		t.Errorf("a 20-packet limit under overload: last sample %+v, want limit drops and no loss drops", last)
	}
	for _, q := range samples {
		if q.Packets > 20 {
			t.Errorf("sample %+v holds more than the 20-packet limit", q)
			break
		}
	}
}

func TestSamplerBadEnd(t *testing.T) {
	l := newTestLink(t, "1:100", BackendNone)
	if _, err := l.Instruments().Sampler(End(3)); err == nil {
		t.Error("Sampler(End(3)) accepted")
	}
	// An unshaped veth has the noqueue root qdisc, which keeps no queue.
	s, err := l.Instruments().Sampler(ServerEnd)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if q, err := s.Poll(); err != nil {
		t.Logf("noqueue poll: %v", err)
	} else if q.Packets != 0 {
		t.Errorf("noqueue reports %d packets", q.Packets)
	}
}

// BenchmarkQdiscPoll reports the cost of one netlink poll of a root qdisc
// (the netem sampler's per-sample cost).
func BenchmarkQdiscPoll(b *testing.B) {
	l := newTestLink(b, "1:100", BackendNone)
	addTbf(b, l, ServerEnd)
	s, err := NewQdiscSampler(l.Server(), l.Instruments().Device(ServerEnd))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Poll(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmulatorPoll reports the cost of one poll of the emulator's
// shared counters.
func BenchmarkEmulatorPoll(b *testing.B) {
	l := newTestLink(b, "1:100", BackendEmulator)
	s, err := l.Instruments().Sampler(ServerEnd)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Poll(); err != nil {
			b.Fatal(err)
		}
	}
}
