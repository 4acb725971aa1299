package linkmodel

import (
	"math"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

type FourState = linkspec.FourState

// TestFourStateSteps: the chain moves as sch_netem.c's loss_4state moves
// it, one draw a packet, the draw compared strictly with p14, p14+p13
// (from state 1), p23 (from 2), p32 and p32+p31 (from 3): a draw equal to
// a boundary moves nothing and loses nothing, even in state 3.
func TestFourStateSteps(t *testing.T) {
	const p13, p14, p23, p32, p31 = 200, 100, 10, 10, 20
	for _, c := range []struct {
		from   uint8
		rnd    uint32
		to     uint8
		isLost bool
	}{
		{1, 50, 4, true},
		{1, 100, 1, false}, // = p14
		{1, 150, 3, true},
		{1, 300, 1, false}, // = p13+p14
		{1, 301, 1, false},
		{4, 0, 1, false},
		{4, 1 << 31, 1, false},
		{2, 9, 3, true},
		{2, 10, 2, false}, // = p23
		{3, 5, 2, false},
		{3, 10, 3, false}, // = p32
		{3, 15, 1, false},
		{3, 30, 3, false}, // = p31+p32
		{3, 31, 3, true},
		{3, math.MaxUint32, 3, true},
	} {
		ch := fourStateChain{p13: p13, p31: p31, p32: p32, p14: p14, p23: p23, state: c.from}
		if got := ch.lost(c.rnd); got != c.isLost || ch.state != c.to {
			t.Errorf("state %d, draw %d: to %d, lost %v; want %d, %v", c.from, c.rnd, ch.state, got, c.to, c.isLost)
		}
	}
}

// TestFourStateOneDraw: the model takes one draw of its stream per frame
// for the 4-state model, as netem does, and starts in state 1.
func TestFourStateOneDraw(t *testing.T) {
	m := New(Direction{Delay: time.Millisecond, Limit: 1 << 20, FourState: FourState{P13: 1, P31: 30, P32: 10, P23: 40, P14: 0.5}, HasFourState: true, Seed: 9}, nil)
	if m.fs.state != 1 {
		t.Fatalf("starts in state %d, want 1", m.fs.state)
	}
	peek := m.rng
	for i := 0; i < 1000; i++ {
		if _, v := m.Arrive(int64(i)*1000, 100); v == Accepted {
			m.Depart(100)
		}
		peek.Uint64()
	}
	if peek != m.rng {
		t.Error("1000 frames did not take exactly 1000 draws")
	}
}

// fourStateExpect is what the 4-state chain gives in the long run,
// computed from its transition matrix alone: the stationary distribution
// (by iterating the matrix from state 1), the share of packets lost
// (states 3 and 4), and the mean lengths of runs of lost and of received
// packets (the share of each over the rate at which bursts start: a
// received packet followed by a lost one).
func fourStateExpect(f FourState) (loss, burst, gap float64) {
	p13, p31, p32, p23, p14 := f.P13/100, f.P31/100, f.P32/100, f.P23/100, f.P14/100
	// P[i][j]: from state i+1 to state j+1.
	P := [4][4]float64{
		{1 - p13 - p14, 0, p13, p14},
		{0, 1 - p23, p23, 0},
		{p31, p32, 1 - p31 - p32, 0},
		{1, 0, 0, 0},
	}
	pi := [4]float64{1, 0, 0, 0}
	for range 200_000 {
		var next [4]float64
		for i := range 4 {
			for j := range 4 {
				next[j] += pi[i] * P[i][j]
			}
		}
		// Averaging with the last step damps the period-2 swing of
		// chains that alternate (1, 4, 1, 4).
		for j := range 4 {
			pi[j] = (pi[j] + next[j]) / 2
		}
	}
	loss = pi[2] + pi[3]
	starts := pi[0]*(p13+p14) + pi[1]*p23
	return loss, loss / starts, (1 - loss) / starts
}

// TestFourStateLossPattern: over two million frames, the model loses the
// share of frames the chain's stationary distribution says, in bursts and
// gaps of the mean lengths it gives, for a parameter set no other test of
// the implementation uses (bursts that start at 2.5% and isolated losses
// at 1.5% of packets in a gap; a burst ends at 20%, and holds a received
// packet at 15%, after which a loss comes back at 35%). Bounds are five
// standard errors, from 200 batches of 10000 frames (a ratio's by the
// delta method).
func TestFourStateLossPattern(t *testing.T) {
	f := FourState{P13: 2.5, P31: 20, P32: 15, P23: 35, P14: 1.5}
	wantLoss, wantBurst, wantGap := fourStateExpect(f)
	if got := f.MeanLoss() / 100; math.Abs(got-wantLoss) > 1e-9 {
		t.Errorf("MeanLoss %.6f%%, the stationary distribution gives %.6f%%", 100*got, 100*wantLoss)
	}
	const batches, per = 200, 10_000
	m := New(Direction{Delay: time.Millisecond, Limit: 1 << 20, FourState: f, HasFourState: true, Seed: 20260601}, nil)
	lost, starts, gaps := make([]float64, batches), make([]float64, batches), make([]float64, batches)
	prev := false
	for b := range batches {
		for i := range per {
			_, v := m.Arrive(int64(b*per+i)*1000, 100)
			isLost := v == Lost
			if v == Accepted {
				m.Depart(100)
			}
			switch {
			case isLost && !prev:
				starts[b]++
			case !isLost && prev:
				gaps[b]++
			}
			if isLost {
				lost[b]++
			}
			prev = isLost
		}
	}
	// mean and standard error of a per-batch share, and of a ratio of
	// per-batch sums.
	share := func(x []float64) (mean, se float64) {
		var s, ss float64
		for _, v := range x {
			s += v / per
		}
		mean = s / batches
		for _, v := range x {
			ss += (v/per - mean) * (v/per - mean)
		}
		return mean, math.Sqrt(ss / (batches - 1) / batches)
	}
	ratio := func(num, den []float64) (r, se float64) {
		var sn, sd float64
		for i := range num {
			sn += num[i]
			sd += den[i]
		}
		r = sn / sd
		var ss float64
		for i := range num {
			e := num[i] - r*den[i]
			ss += e * e
		}
		mden := sd / batches
		return r, math.Sqrt(ss/(batches-1)/batches) / mden
	}
	received := make([]float64, batches)
	for b := range received {
		received[b] = per - lost[b]
	}
	loss, seLoss := share(lost)
	burst, seBurst := ratio(lost, starts)
	gap, seGap := ratio(received, gaps)
	t.Logf("%s: lost %.4f%% (want %.4f%%, SE %.4f%%), mean burst %.4f (want %.4f, SE %.4f), mean gap %.3f (want %.3f, SE %.3f)",
		f, 100*loss, 100*wantLoss, 100*seLoss, burst, wantBurst, seBurst, gap, wantGap, seGap)
	if math.Abs(loss-wantLoss) > 5*seLoss {
		t.Errorf("lost %.4f%%, want %.4f%% within 5 SE (%.4f%%)", 100*loss, 100*wantLoss, 500*seLoss)
	}
	if math.Abs(burst-wantBurst) > 5*seBurst {
		t.Errorf("mean burst %.4f, want %.4f within 5 SE (%.4f)", burst, wantBurst, 5*seBurst)
	}
	if math.Abs(gap-wantGap) > 5*seGap {
		t.Errorf("mean gap %.3f, want %.3f within 5 SE (%.3f)", gap, wantGap, 5*seGap)
	}
}
