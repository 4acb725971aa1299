package linkmodel

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

func TestTxTimeCountsWholeFrame(t *testing.T) {
	m := New(Direction{RateMbit: 1000, Limit: 1}, nil)
	if got := m.txTime(1514); got != 12112 {
		t.Errorf("TxTime(1514) at 1 Gbit/s = %d ns, want 12112 (1514*8 bits)", got)
	}
	m = New(Direction{RateMbit: 3e-06, Limit: 1}, nil)
	if got := m.txTime(1); got != 2666666666 {
		t.Errorf("TxTime(1) at 3 bit/s = %d ns, want 2666666666 (truncated like netem)", got)
	}
	if got := New(Direction{Limit: 1}, nil).txTime(1514); got != 0 {
		t.Errorf("TxTime with no rate = %d, want 0", got)
	}
}

// The loss is decided before the limit: which arrivals are lost must not
// depend on how full the queue is, and a lost arrival never takes a slot.
func TestLossDecidedBeforeLimit(t *testing.T) {
	const n = 2000
	run := func(limit int) (lost []bool, accepted, over int) {
		m := New(Direction{Delay: time.Second, Limit: limit, LossPct: 30, Seed: 42}, nil)
		for i := 0; i < n; i++ {
			_, v := m.Arrive(int64(i), 100)
			lost = append(lost, v == Lost)
			switch v {
			case Accepted:
				accepted++
			case OverLimit:
				over++
			}
		}
		return lost, accepted, over
	}
	full, acc1, over1 := run(5)
	free, acc2, over2 := run(n)
	nlost := 0
	for i := range full {
		if full[i] != free[i] {
			t.Fatalf("arrival %d: lost=%v with limit 5 but lost=%v with limit %d; the loss draw must not depend on the queue", i, full[i], free[i], n)
		}
		if full[i] {
			nlost++
		}
	}
	if acc1 != 5 || over1 != n-nlost-5 {
		t.Errorf("limit 5: accepted %d, over-limit %d; want 5 and %d (every non-lost arrival after the 5th)", acc1, over1, n-nlost-5)
	}
	if acc2 != n-nlost || over2 != 0 {
		t.Errorf("limit %d: accepted %d, over-limit %d; want %d and 0", n, acc2, over2, n-nlost)
	}
	if nlost == 0 {
		t.Error("no arrival was lost at 30% loss")
	}
}

// With no rate there is no queue at all, so anything the limit counts is
// in the delay line: netem's tfifo behaviour.
func TestLimitCountsDelayLine(t *testing.T) {
	m := New(Direction{Delay: 40 * time.Millisecond, Limit: 3}, nil)
	for i := 0; i < 3; i++ {
		due, v := m.Arrive(int64(i)*int64(time.Millisecond), 1000)
		if v != Accepted || due != int64(i)*int64(time.Millisecond)+int64(40*time.Millisecond) {
			t.Fatalf("arrival %d: %v due %v, want accepted due %v", i, v, time.Duration(due), time.Duration(int64(i)*int64(time.Millisecond))+40*time.Millisecond)
		}
	}
	if _, v := m.Arrive(int64(10*time.Millisecond), 1000); v != OverLimit {
		t.Fatalf("4th arrival with 3 frames in the delay line: %v, want over-limit", v)
	}
	if p, b := m.Held(); p != 3 || b != 3000 {
		t.Fatalf("held %d frames %d bytes, want 3 and 3000", p, b)
	}
	m.Depart(1000)
	if _, v := m.Arrive(int64(41*time.Millisecond), 1000); v != Accepted {
		t.Fatalf("arrival after one departure: %v, want accepted", v)
	}
}

// Worked example of "serialise at the rate, then delay" on 10 Mbit/s and
// 40 ms, where a 1514-byte frame takes 1.2112 ms.
func TestSerialiseThenDelay(t *testing.T) {
	const tx = 1_211_200
	const d = int64(40 * time.Millisecond)
	m := New(Direction{Delay: 40 * time.Millisecond, RateMbit: 10, Limit: 100}, nil)
	steps := []struct {
		now, want int64
	}{
		{0, d + tx},                     // idle link
		{0, d + 2*tx},                   // behind the first
		{5_000_000, 5_000_000 + d + tx}, // link idle again by 5 ms: no queueing
		{5_000_000, 5_000_000 + d + 2*tx},
	}
	for i, s := range steps {
		due, v := m.Arrive(s.now, 1514)
		if v != Accepted || due != s.want {
			t.Errorf("step %d: arrival at %v: %v due %v, want accepted due %v", i, time.Duration(s.now), v, time.Duration(due), time.Duration(s.want))
		}
	}
}

// The model against an independent reference: a serialiser (start =
// max(arrival, previous end), end = start + tx) followed by a constant
// delay, driven by an event simulation with a fake clock and random
// arrivals, sizes, rates and limits. The frames are departed at their due
// times, so the limit sees what the shaper would hold.
func TestModelMatchesSerialiserThenDelay(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 200; trial++ {
		d := Direction{
			Delay:    time.Duration(r.IntN(50_000_000)),
			RateMbit: float64(1_000_000+r.IntN(1_000_000_000)) / 1e6,
			Limit:    1 + r.IntN(50),
		}
		m := New(d, nil)
		var linkFree int64
		type held struct{ due, size int64 }
		var q []held
		now := int64(0)
		for i := 0; i < 500; i++ {
			now += int64(r.ExpFloat64() * float64(m.txTime(1514)))
			for len(q) > 0 && q[0].due <= now {
				m.Depart(int(q[0].size))
				q = q[1:]
			}
			size := 60 + r.IntN(1455)
			due, v := m.Arrive(now, size)
			if len(q) >= d.Limit {
				if v != OverLimit {
					t.Fatalf("trial %d frame %d: %d held with limit %d, got %v", trial, i, len(q), d.Limit, v)
				}
				continue
			}
			start := max(now, linkFree)
			linkFree = start + int64(uint64(size)*8*1_000_000_000/d.RateBits())
			want := linkFree + int64(d.Delay)
			if v != Accepted || due != want {
				t.Fatalf("trial %d frame %d (%+v): %v due %d, reference says %d", trial, i, d, v, due, want)
			}
			q = append(q, held{due, int64(size)})
		}
	}
}

// The loss rate over many arrivals lands inside a 99.9% binomial interval.
func TestLossRate(t *testing.T) {
	for _, pct := range []float64{0.5, 1, 10, 50} {
		const n = 200_000
		m := New(Direction{Limit: n + 1, LossPct: pct, Seed: 99}, nil)
		lost := 0
		for i := 0; i < n; i++ {
			if _, v := m.Arrive(0, 100); v == Lost {
				lost++
			}
		}
		p := pct / 100
		sd := math.Sqrt(n * p * (1 - p))
		if lo, hi := n*p-3.29*sd, n*p+3.29*sd; float64(lost) < lo || float64(lost) > hi {
			t.Errorf("loss %v%%: %d of %d lost, outside the 99.9%% interval [%.0f, %.0f]", pct, lost, n, lo, hi)
		}
	}
}

func TestSeedsAreIndependentStreams(t *testing.T) {
	a := New(Direction{Limit: 10, LossPct: 50, Seed: 1}, nil)
	b := New(Direction{Limit: 10, LossPct: 50, Seed: 2}, nil)
	same := 0
	for i := 0; i < 256; i++ {
		_, va := a.Arrive(0, 1)
		_, vb := b.Arrive(0, 1)
		if (va == Lost) == (vb == Lost) {
			same++
		}
		if va != Lost {
			a.Depart(1)
		}
		if vb != Lost {
			b.Depart(1)
		}
	}
	if same > 200 || same < 56 {
		t.Errorf("seeds 1 and 2 agreed on %d of 256 loss decisions; they look correlated", same)
	}
}

func BenchmarkModelArriveDepart(b *testing.B) {
	m := New(Direction{Delay: 40 * time.Millisecond, RateMbit: 10, Limit: 110, LossPct: 1, Seed: 1}, nil)
	b.ReportAllocs()
	now := int64(0)
	for i := 0; i < b.N; i++ {
		now += 1_300_000
		if _, v := m.Arrive(now, 1514); v == Accepted {
			m.Depart(1514)
		}
	}
}

// TestQueued: a frame is marked queued only when the rate made it wait
// behind the frame before it, jitter or not.
func TestQueued(t *testing.T) {
	for _, jitter := range []time.Duration{0, 10 * time.Millisecond} {
		m := New(Direction{Delay: 40 * time.Millisecond, Jitter: jitter, RateMbit: 10, Limit: 100, Seed: 3}, nil)
		if _, v := m.Arrive(0, 1514); v != Accepted || m.Queued() {
			t.Errorf("jitter %v: the first frame on an idle link is marked queued", jitter)
		}
		// Back to back: the second waits for the first unless its own
		// draw puts it later than the first's departure anyway.
		due1 := m.lastDue
		due2, _ := m.Arrive(0, 1514)
		if due2 == due1+m.txTime(1514) && !m.Queued() {
			t.Errorf("jitter %v: a frame that left right behind the one ahead is not marked queued", jitter)
		}
		if _, v := m.Arrive(int64(time.Second), 1514); v != Accepted || m.Queued() {
			t.Errorf("jitter %v: a frame a second later is marked queued", jitter)
		}
	}
}

// TestJitterUniform: with jitter J, an accepted frame's delay is uniform
// on [D-J, D+J) (Kolmogorov-Smirnov distance against that distribution
// below the 0.1% critical value over 20000 frames spaced far apart), and
// with a rate no frame is due before the one ahead of it.
func TestJitterUniform(t *testing.T) {
	const n = 20000
	d, j := 40*time.Millisecond, 10*time.Millisecond
	m := New(Direction{Delay: d, Jitter: j, RateMbit: 1000, Limit: 10, Seed: 9}, nil)
	delays := make([]float64, 0, n)
	for i := 0; i < n; i++ {
		now := int64(i) * int64(time.Second) // far apart: no queue
		due, v := m.Arrive(now, 100)
		if v != Accepted {
			t.Fatalf("frame %d: %v", i, v)
		}
		m.Depart(100)
		delays = append(delays, float64(due-now-m.txTime(100)))
	}
	slices.Sort(delays)
	lo, hi := float64(d-j), float64(d+j)
	var dmax float64
	for i, x := range delays {
		f := (x - lo) / (hi - lo)
		dmax = max(dmax, math.Abs(f-float64(i)/n), math.Abs(f-float64(i+1)/n))
	}
	if crit := 1.95 / math.Sqrt(n); dmax > crit || delays[0] < lo || delays[n-1] >= hi {
		t.Errorf("delays from %.3f to %.3f ms, KS distance %.4f (critical %.4f); want uniform on [%v, %v)", delays[0]/1e6, delays[n-1]/1e6, dmax, crit, d-j, d+j)
	}
	// Back to back at the rate: dues never go backwards.
	m = New(Direction{Delay: d, Jitter: j, RateMbit: 10, Limit: 1000, Seed: 9}, nil)
	var last int64
	for i := 0; i < 500; i++ {
		due, _ := m.Arrive(int64(i)*100_000, 1514) // 0.1 ms apart, 1.2 ms each at 10 Mbit/s
		if due < last {
			t.Fatalf("frame %d due at %d, before the frame ahead (%d): jitter reordered a rate-limited link", i, due, last)
		}
		last = due
	}
}
