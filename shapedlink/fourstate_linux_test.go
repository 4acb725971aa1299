package shapedlink

import (
	"encoding/binary"
	"math"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkmodel"
	"golang.org/x/sys/unix"
)

// TestFourStateOption: loss=state:... is read per direction, written back
// by String, refused with the option and parameter named when it cannot
// be built, and counts as loss.
func TestFourStateOption(t *testing.T) {
	p, err := ParseProfile("80:10,up.loss=state:1%/30/10/40/0.5")
	if err != nil {
		t.Fatal(err)
	}
	if s := p.String(); s != "80:10,up.loss=state:1/30/10/40/0.5" {
		t.Errorf("String() = %q", s)
	}
	if u, d := p.Direction(Up), p.Direction(Down); !u.HasFourState || u.FourState != (FourState{P13: 1, P31: 30, P32: 10, P23: 40, P14: 0.5}) || d.HasFourState {
		t.Errorf("up %+v, down %+v", u, d)
	}
	if !p.HasLoss() {
		t.Error("HasLoss() = false for a 4-state model")
	}
	for _, c := range []struct{ in, field, says string }{
		{"80:10,up.loss=state:1/101", `option "up.loss=state:1/101"`, `state p31 "101" is more than 100%`},
		{"80:10,loss=state:60/30/0/100/50", `option "loss=state:60/30/0/100/50"`, "p13+p14 = 110%"},
		{"80:10,loss=state:1/2/3/4/5/6", `option "loss=state:1/2/3/4/5/6"`, "has 6 parts"},
		{"80:10,loss=state:10/0", "down.loss", "loses 100% of packets"},
		{"80:10,up.loss=state:10/0", "up.loss", "loses 100% of packets"},
	} {
		wantRefused(t, c.in, c.field, c.says)
	}
}

// runStats is the share of datagrams lost in seen (false: lost) and the
// mean lengths of its runs of losses and of arrivals.
func runStats(seen []bool) (loss, burst, gap float64) {
	lost, bursts, gaps := 0, 0, 0
	for i, ok := range seen {
		if !ok {
			lost++
		}
		if i == 0 || ok != seen[i-1] {
			if ok {
				gaps++
			} else {
				bursts++
			}
		}
	}
	return float64(lost) / float64(len(seen)), float64(lost) / float64(max(bursts, 1)), float64(len(seen)-lost) / float64(max(gaps, 1))
}

// TestFourStateEmulator: a down direction with the 4-state model
// (state:4/25/10/50/1: about 14% lost, in bursts of about 2.6 and gaps of
// about 15.6) loses, on the emulator, the share of 20000 datagrams the
// model does, in bursts and gaps of its mean lengths, measured from the
// sequence numbers that arrive; the up direction loses nothing, and the
// shaper counts every missing datagram as a loss drop. The loss share is
// held to the chain's stationary figure (MeanLoss), the burst and gap
// lengths to the model's mean over 300 runs of 20000, each seeded apart;
// the bounds are five standard deviations of those runs.
func TestFourStateEmulator(t *testing.T) {
	const profile = "2:100@2000,down.loss=state:4/25/10/50/1"
	l := newTestLink(t, profile, BackendEmulator)
	if a := l.Applied(); !strings.Contains(a[0], "loss state p13 4% p31 25% p32 10% p23 50% p14 1%") || strings.Contains(a[1], "loss") {
		t.Fatalf("applied %q, want the 4-state model on server->client only", a)
	}
	const n = 20000
	p, err := ParseProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	var sum, sq [3]float64
	const runs = 300
	for r := range runs {
		d := p.Direction(Down)
		d.Seed = uint64(1000 + r)
		m := linkmodel.New(d, nil)
		seen := make([]bool, n)
		for i := range seen {
			_, v := m.Arrive(int64(i)*50_000, 64)
			seen[i] = v != linkmodel.Lost
			if v == linkmodel.Accepted {
				m.Depart(64)
			}
		}
		loss, burst, gap := runStats(seen)
		for k, x := range []float64{loss, burst, gap} {
			sum[k] += x
			sq[k] += x * x
		}
	}
	var mean, sd [3]float64
	for k := range mean {
		mean[k] = sum[k] / runs
		sd[k] = math.Sqrt((sq[k] - runs*mean[k]*mean[k]) / (runs - 1))
	}
	// The loss share is held to the chain's stationary figure, which
	// the model's runs must agree with too.
	stationary := p.Direction(Down).FourState.MeanLoss() / 100
	if math.Abs(mean[0]-stationary) > 5*sd[0]/math.Sqrt(runs) || sd[0] == 0 {
		t.Fatalf("the model's runs lose %.4f%% (sd %.4f%%), the stationary distribution %.4f%%", 100*mean[0], 100*sd[0], 100*stationary)
	}
	mean[0] = stationary

	srv, cli := udpPair(t, l)
	// A reader starved of CPU must not lose datagrams in its socket.
	if rc, err := cli.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) {
			if unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20) != nil {
				_ = cli.SetReadBuffer(8 << 20)
			}
		})
	}
	got := make(chan []bool, 1)
	go func() {
		seen := make([]bool, n)
		buf := make([]byte, 64)
		for {
			k, _, err := cli.ReadFromUDP(buf)
			if err != nil {
				got <- seen
				return
			}
			if k >= 4 {
				if i := int(binary.BigEndian.Uint32(buf)); i < n {
					seen[i] = true
				}
			}
		}
	}()
	msg := make([]byte, 64)
	start := time.Now()
	for i := 0; i < n; i++ {
		binary.BigEndian.PutUint32(msg, uint32(i))
		// 50 us apart: no queue builds and the limit is never reached,
		// so only the loss model loses frames.
		for time.Since(start) < time.Duration(i)*50*time.Microsecond {
		}
		if _, err := srv.WriteToUDP(msg, cli.LocalAddr().(*net.UDPAddr)); err != nil {
			t.Fatal(err)
		}
	}
	_ = cli.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	seen := <-got
	loss, burst, gap := runStats(seen)
	lost := int(math.Round(loss * n))
	sh, _ := l.Instruments().ShaperStats()
	if d := sh.Directions[0]; d.LimitDrops != 0 || d.SocketDrops != 0 || d.LossDrops != uint64(lost) {
		t.Errorf("shaper: %d loss drops, %d limit drops, %d socket drops; want exactly the %d missing datagrams, all from the loss model", d.LossDrops, d.LimitDrops, d.SocketDrops, lost)
	}
	t.Logf("lost %.2f%% (stationary %.2f%%, sd %.2f%%), mean burst %.3f (model %.3f, sd %.3f), mean gap %.2f (model %.2f, sd %.2f)",
		100*loss, 100*mean[0], 100*sd[0], burst, mean[1], sd[1], gap, mean[2], sd[2])
	for k, x := range []float64{loss, burst, gap} {
		if math.Abs(x-mean[k]) > 5*sd[k] {
			t.Errorf("%s %.4f, want %.4f within 5 sd (%.4f)", []string{"loss share", "mean burst", "mean gap"}[k], x, mean[k], 5*sd[k])
		}
	}
}
