package linkmodel

import (
	"math"
	"testing"
	"time"
)

// geRuns drives a model with GE loss through n frames and returns the
// fraction lost and the mean length of runs of consecutive losses.
func geRuns(t *testing.T, g GE, seed uint64, n int) (loss, burst float64) {
	t.Helper()
	m := New(Direction{Delay: time.Millisecond, Limit: 1 << 20, GE: g, HasGE: true, Seed: seed}, nil)
	lost, runs, run := 0, 0, 0
	for i := 0; i < n; i++ {
		_, v := m.Arrive(int64(i)*1000, 100)
		if v == Lost {
			lost++
			run++
			continue
		}
		if v == Accepted {
			m.Depart(100)
		}
		if run > 0 {
			runs++
			run = 0
		}
	}
	if runs == 0 {
		return float64(lost) / float64(n), 0
	}
	return float64(lost) / float64(n), float64(lost) / float64(runs)
}

// TestGilbertElliott: the simple Gilbert model (1-h 100%, 1-k 0%) loses
// p/(p+r) of the frames in bursts of 1/r on average, for the two settings
// the burst-loss experiment uses (1% mean loss in bursts of about 3 and
// 10 frames); the full model's mean loss is the stationary mix of its two
// states' loss rates. Bounds are five standard errors of the estimates
// over a million frames.
func TestGilbertElliott(t *testing.T) {
	const n = 1_000_000
	for _, c := range []struct {
		g           GE
		wantBurst   float64 // 0: not checked
		description string
	}{
		{GE{P: 0.33670, R: 33.333, OneMinusH: 100}, 3, "1% in bursts of 3"},
		{GE{P: 0.10101, R: 10, OneMinusH: 100}, 10, "1% in bursts of 10"},
		{GE{P: 2, R: 20, OneMinusH: 50, OneMinusK: 1}, 0, "lossy bad state, lossy good state"},
	} {
		loss, burst := geRuns(t, c.g, 7, n)
		want := c.g.MeanLoss() / 100
		// Losses come in bursts, so the standard error of the loss
		// fraction is larger than binomial by about the burst length.
		se := math.Sqrt(want*(1-want)/n) * math.Sqrt(2/(c.g.R/100))
		if math.Abs(loss-want) > 5*se {
			t.Errorf("%s: lost %.4f%%, want %.4f%% (5 SE = %.4f%%)", c.description, 100*loss, 100*want, 500*se)
		}
		if c.wantBurst > 0 {
			// A burst is geometric with mean 1/r; its standard error over
			// the number of bursts seen.
			bursts := loss * n / c.wantBurst
			seB := math.Sqrt(c.wantBurst*(c.wantBurst-1)) / math.Sqrt(bursts)
			if math.Abs(burst-c.wantBurst) > 5*seB {
				t.Errorf("%s: mean burst %.3f frames, want %.3f (5 SE = %.3f)", c.description, burst, c.wantBurst, 5*seB)
			}
		}
		t.Logf("%s: lost %.4f%% (want %.4f%%), mean burst %.3f", c.description, 100*loss, 100*want, burst)
	}
}

// TestGilbertElliottStartsGood: with p = 0 the chain never leaves the
// good state, so only 1-k loses frames; with 1-k = 0 nothing is lost.
func TestGilbertElliottStartsGood(t *testing.T) {
	if loss, _ := geRuns(t, GE{P: 0, R: 50, OneMinusH: 100}, 1, 10000); loss != 0 {
		t.Errorf("p = 0, 1-k = 0: lost %.4f%% of frames, want none", 100*loss)
	}
	if loss, _ := geRuns(t, GE{P: 100, R: 0, OneMinusH: 100}, 1, 10000); loss < 0.999 {
		t.Errorf("p = 100%%, r = 0: lost %.4f%% of frames, want all but the first", 100*loss)
	}
}
