package calibrate

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
)

// TestPlanGSO: the flood is paced to its share of the rate counting each
// datagram's 1442-byte frame, in writes of 32 datagrams where the limit
// allows and a fifth of the limit where it is small; too little time or
// rate for one write is refused.
func TestPlanGSO(t *testing.T) {
	limit := shapedlink.DefaultLimit(2000, 5*time.Millisecond)
	p, err := planGSO(2000, 60, limit, 8*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	pps := 0.6 * 2000e6 / (gsoFrame * 8)
	if p.batch != 32 || p.total != p.writes*p.batch || float64(p.total) > pps*8 || float64(p.total) < pps*8-32 {
		t.Errorf("2000 Mbit/s at 60%% for 8 s: %+v; want writes of 32 adding up to %.0f datagrams", p, pps*8)
	}
	if got := float64(p.batch) / p.gap.Seconds(); got < pps*0.999 || got > pps*1.001 {
		t.Errorf("paced at %.0f datagrams/s, want %.0f", got, pps)
	}
	small := shapedlink.DefaultLimit(10, 5*time.Millisecond)
	if p, err := planGSO(10, 60, small, 8*time.Second); err != nil || p.batch != small/5 {
		t.Errorf("10 Mbit/s, limit %d: %+v, %v; want writes of %d", small, p, err, small/5)
	}
	if _, err := planGSO(1, 1, 17, 500*time.Millisecond); err == nil || !strings.Contains(err.Error(), "-gsoloss-time") {
		t.Errorf("a flood of less than one write: %v; want it refused, naming -gsoloss-time", err)
	}
}

// TestGSORecord: a plain read is one datagram; a UDP_GRO read is split
// at the segment size the kernel reported, each piece counted by its
// number; a piece of the wrong length or a number never sent is counted
// malformed, not seen.
func TestGSORecord(t *testing.T) {
	dgram := func(i uint32, n int) []byte {
		b := make([]byte, n)
		binary.BigEndian.PutUint32(b, i)
		return b
	}
	r := gsoRecord{seen: make([]bool, 10)}
	r.take(dgram(0, gsoPayload), 0)
	r.take(dgram(1, gsoPayload), gsoPayload) // GRO with one segment
	var co []byte
	for _, i := range []uint32{3, 4, 5} {
		co = append(co, dgram(i, gsoPayload)...)
	}
	r.take(co, gsoPayload)
	r.take(append(dgram(7, gsoPayload), dgram(8, 100)...), gsoPayload) // a short last piece
	r.take(dgram(42, gsoPayload), 0)                                   // never sent
	want := []bool{true, true, false, true, true, true, false, true, false, false}
	for i := range want {
		if r.seen[i] != want[i] {
			t.Errorf("datagram %d seen %v, want %v", i, r.seen[i], want[i])
		}
	}
	if r.coalesced != 2 || r.malformed != 2 {
		t.Errorf("%d coalesced reads and %d malformed, want 2 and 2", r.coalesced, r.malformed)
	}
}

// TestGSOLossJudge: the receiver's count is judged against the
// configured loss only when nothing else dropped a datagram: each other
// drop the shaper, the sockets or the path report is named, and so is a
// receiver's loss the shaper's configured loss does not account for.
func TestGSOLossJudge(t *testing.T) {
	rec := func(n, lost int) gsoRecord {
		r := gsoRecord{seen: make([]bool, n)}
		for i := lost; i < n; i++ {
			r.seen[i] = true
		}
		return r
	}
	clean := GSOLoss{LossWantPct: 1, Sent: 10000, Shaper: true, ShaperReceived: 10000, ShaperLossDrops: 100, Inflation: 1}
	g := clean
	g.judge(rec(10000, 100))
	if g.Lost != 100 || g.LossPct != 1 || !g.Inside || g.Unjudged != "" || g.LossLoPct >= 1 || g.LossHiPct <= 1 || g.MeanBurst != 100 {
		t.Errorf("a clean run: %+v; want 100 lost in one burst, 1%% inside its interval, judged", g)
	}
	// Bursts widen the interval: 1.3% of 10000 is outside the binomial
	// interval of 1% and inside one widened nine times (the variance of
	// Gilbert-Elliott with p+r = 0.2).
	g = clean
	g.ShaperLossDrops = 130
	g.judge(rec(10000, 130))
	wide := clean
	wide.ShaperLossDrops, wide.Inflation = 130, 9
	wide.judge(rec(10000, 130))
	if g.Inside || !wide.Inside || wide.LossHiPct-wide.LossLoPct < 2.5*(g.LossHiPct-g.LossLoPct) {
		t.Errorf("1.3%% lost: binomial [%.3f, %.3f] inside %v, widened [%.3f, %.3f] inside %v; want outside, then inside an interval three times as wide",
			g.LossLoPct, g.LossHiPct, g.Inside, wide.LossLoPct, wide.LossHiPct, wide.Inside)
	}
	g = clean
	g.judge(rec(10000, 300))
	if g.Inside || !strings.Contains(g.Unjudged, "the receiver missed 300, the shaper's configured loss took 100") {
		t.Errorf("300 lost where the shaper lost 100: inside %v, unjudged %q", g.Inside, g.Unjudged)
	}
	for _, tc := range []struct {
		edit func(*GSOLoss)
		want string
	}{
		{func(g *GSOLoss) { g.LimitDrops = 3 }, "3 dropped at the limit"},
		{func(g *GSOLoss) { g.SendErrors = 2 }, "2 failed writes"},
		{func(g *GSOLoss) { g.SocketDrops = 4 }, "4 dropped before the shaper read them"},
		{func(g *GSOLoss) { g.OtherDrops = 1 }, "1 oversize or unreadable"},
		{func(g *GSOLoss) { g.ShaperReceived = 9990 }, "10 never reached the shaper"},
		{func(g *GSOLoss) { g.RcvbufErrors = 5 }, "5 dropped by the receiving socket"},
		{func(g *GSOLoss) { g.SndbufErrors = 6 }, "6 dropped at the sender"},
		{func(g *GSOLoss) { g.Shaper, g.RcvbufErrors = false, 7 }, "7 dropped by the receiving socket"},
	} {
		g := clean
		tc.edit(&g)
		g.judge(rec(10000, 100))
		if !strings.Contains(g.Unjudged, tc.want) {
			t.Errorf("unjudged %q; want it to say %q", g.Unjudged, tc.want)
		}
	}
	g = clean
	g.Shaper = false
	g.judge(rec(10000, 100))
	if g.Unjudged != "" || !g.Inside {
		t.Errorf("netem, no drops but the loss: unjudged %q, inside %v; want judged, inside", g.Unjudged, g.Inside)
	}
}
