package calibrate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
)

func TestWilsonContainsTruth(t *testing.T) {
	for _, c := range []struct {
		k, n int
		p    float64
		in   bool
	}{{0, 4000, 0, true}, {40, 4000, 0.01, true}, {40, 4000, 0.02, false}, {4000, 4000, 1, true}, {10, 100, 0.5, false}} {
		lo, hi := Wilson(c.k, c.n)
		if got := c.p >= lo && c.p <= hi; got != c.in {
			t.Errorf("Wilson(%d, %d) = [%v, %v]: contains %v is %v, want %v", c.k, c.n, lo, hi, c.p, got, c.in)
		}
	}
}

func TestQuantileNearestRank(t *testing.T) {
	xs := []time.Duration{5, 1, 4, 2, 3}
	if got := quantile(xs, 0.5); got != 3 {
		t.Errorf("p50 of 1..5 = %v, want 3", got)
	}
	if got := quantile(xs, 0.99); got != 5 {
		t.Errorf("p99 of 1..5 = %v, want 5", got)
	}
}

func TestLossy(t *testing.T) {
	for p, want := range map[string]bool{"80:10": false, "80:10:1": true, "80:10:0": false, "80:10@50": false, "80:10:1@50": true, "80:10,up.loss=1": true, "80:10:1,loss=0": false, "20:50,up.rate=5": false} {
		if got := (Result{Profile: p}).lossy(); got != want {
			t.Errorf("lossy(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestWireShareNeverAboveTheRate: a flow whose wire share exceeds the
// configured rate by more than the allowance is reported as an error, not
// as a figure; one within it is kept.
func TestWireShareNeverAboveTheRate(t *testing.T) {
	long := maxWirePct(6*time.Second, 10e6, 0)
	if long != wireLimitFloor {
		t.Errorf("a 6 s window at 10 Mbit/s allows %.2f%%, want %.1f%%", long, wireLimitFloor)
	}
	short := maxWirePct(400*time.Millisecond, 10e6, 0) // edges 2*1.2112 ms + 2 ms
	if short < 101.09 || short > 101.12 {
		t.Errorf("a 400 ms window at 10 Mbit/s allows %.3f%%, want 101.11%%", short)
	}
	// An emulator that wrote a frame 4 ms late may have written 4 ms of
	// frames due before the window inside it: 1% more of 400 ms.
	if lateShort := maxWirePct(400*time.Millisecond, 10e6, 4*time.Millisecond); math.Abs(lateShort-short-1) > 1e-9 {
		t.Errorf("a 400 ms window with 4 ms of lateness allows %.3f%%, want %.3f%%", lateShort, short+1)
	}
	for _, c := range []struct {
		pct, limit float64
		wantE      bool
	}{{106.8, long, true}, {100.6, long, true}, {100.5, long, false}, {97.0, long, false},
		{101.0, short, false}, {101.2, short, true}} {
		b := Bulk{CC: "bbr", WirePct: c.pct, WireFrom: "shaper"}
		checkWire(&b, c.limit)
		if got := b.Error != ""; got != c.wantE {
			t.Errorf("wire %.1f%% against %.2f%%: error %q, want an error: %v", c.pct, c.limit, b.Error, c.wantE)
		}
	}
	b := Bulk{WirePct: 120, Error: "dial: refused"}
	if checkWire(&b, long); b.Error != "dial: refused" {
		t.Errorf("an earlier error was replaced: %q", b.Error)
	}
}

func TestLossRuns(t *testing.T) {
	seen := []bool{true, false, false, true, false, true, true, false, false, false}
	if lost, bursts := lossRuns(seen); lost != 6 || bursts != 3 {
		t.Errorf("lossRuns = %d lost in %d bursts, want 6 in 3", lost, bursts)
	}
	if lost, bursts := lossRuns([]bool{true, true}); lost != 0 || bursts != 0 {
		t.Errorf("no loss: %d in %d", lost, bursts)
	}
}

// TestLossModel: independent loss has bursts of 1/(1-p) and a binomial
// interval; the simple Gilbert model 1% in bursts of 3 has bursts of 3
// and its variance inflated by (1+lambda)/(1-lambda), lambda = 1-p-r, so
// its interval is wider than the binomial one by the square root.
func TestLossModel(t *testing.T) {
	mean, burst, infl := lossModel(shapedlink.Direction{LossPct: 1})
	if mean != 1 || math.Abs(burst-1/0.99) > 1e-12 || infl != 1 {
		t.Errorf("independent 1%%: %v %v %v", mean, burst, infl)
	}
	g := shapedlink.Direction{HasGE: true, GE: shapedlink.GE{P: 0.3367, R: 33.33, OneMinusH: 100}}
	mean, burst, infl = lossModel(g)
	lambda := 1 - 0.003367 - 0.3333
	if math.Abs(mean-1) > 0.001 || math.Abs(burst-3.0003) > 0.001 || math.Abs(infl-(1+lambda)/(1-lambda)) > 1e-9 {
		t.Errorf("GE 1%% in bursts of 3: mean %v, burst %v, inflation %v", mean, burst, infl)
	}
	lo1, hi1 := Wilson(40, 4000)
	if lo, hi := wilsonEffective(40, 4000, 1); lo != lo1 || hi != hi1 {
		t.Errorf("inflation 1 changes the interval: [%v, %v] against [%v, %v]", lo, hi, lo1, hi1)
	}
	lo, hi := wilsonEffective(40, 4000, infl)
	if ratio := (hi - lo) / (hi1 - lo1); ratio < 0.9*math.Sqrt(infl) || ratio > 1.1*math.Sqrt(infl) {
		t.Errorf("the GE interval is %.2f times the binomial one, want about sqrt(%.2f) = %.2f", ratio, infl, math.Sqrt(infl))
	}
}

// TestFourStateModel: the 4-state model's mean loss, mean run of
// consecutive losses and variance ratio, worked by hand for four chains:
// state:1/30 is the simple Gilbert model (p 1%, r 30%: 1/31 lost, runs
// of 1/0.3, ratio (1+lambda)/(1-lambda) with lambda 0.69); 50% isolated
// losses alternate with receptions at least (1/3 lost, runs of one,
// ratio (1+lambda)/(1-lambda) with lambda 1-0.5-1, so 1/3, which
// lossModel raises to 1); state:1/20/10/40/1 spends 1, 0.0125, 0.05 and
// 0.01 in states 1 to 4 (0.06/1.0725 lost, runs of 0.06/(0.01+0.05*0.3));
// (its variance ratio is left to TestFourStateModelSimulated); state:p13
// alone is lossModel's independent loss of p13. The profile
// 80:10,loss=state:1/30 is judged against its 3.2%.
func TestFourStateModel(t *testing.T) {
	for _, c := range []struct {
		spec                  string
		mean, burst, varRatio float64
	}{
		{"1/30", 100.0 / 31, 1 / 0.3, 1.69 / 0.31},
		{"0/100/0/100/50", 100.0 / 3, 1, 1.0 / 3},
		{"1/20/10/40/1", 100 * 0.06 / 1.0725, 0.06 / 0.025, 0},
	} {
		d := fourStateDir(t, c.spec)
		mean, burst, ratio := fourStateModel(d.FourState)
		if math.Abs(mean-c.mean) > 1e-9 || math.Abs(burst-c.burst) > 1e-9 || (c.varRatio > 0 && math.Abs(ratio-c.varRatio) > 1e-9) {
			t.Errorf("state:%s: mean %v%%, runs of %v, variance ratio %v; want %v%%, %v, %v", c.spec, mean, burst, ratio, c.mean, c.burst, c.varRatio)
		}
		if m := d.FourState.MeanLoss(); math.Abs(mean-m) > 1e-9 {
			t.Errorf("state:%s: mean %v%%, FourState.MeanLoss %v%%", c.spec, mean, m)
		}
	}
	if _, _, infl := lossModel(fourStateDir(t, "0/100/0/100/50")); infl != 1 {
		t.Errorf("alternating losses: lossModel inflation %v, want 1 (the binomial interval)", infl)
	}
	for _, pct := range []float64{0.5, 2, 30} {
		m1, b1, i1 := lossModel(shapedlink.Direction{LossPct: pct})
		m2, b2, i2 := lossModel(fourStateDir(t, fmt.Sprint(pct)))
		if math.Abs(m1-m2) > 1e-9 || math.Abs(b1-b2) > 1e-9 || math.Abs(i1-i2) > 1e-9 {
			t.Errorf("state:%v: %v %v %v; independent %v%%: %v %v %v", pct, m2, b2, i2, pct, m1, b1, i1)
		}
	}
	p, err := shapedlink.ParseProfile("80:10,loss=state:1/30")
	if err != nil {
		t.Fatal(err)
	}
	if mean, _, _ := lossModel(p.Direction(shapedlink.Down)); math.Abs(mean-100.0/31) > 1e-9 {
		t.Errorf("80:10,loss=state:1/30 is judged against %v%%, want 3.23%%", mean)
	}
}

// TestFourStateModelSimulated runs each chain for 8 million packets with
// a fixed seed and compares what lossRuns and 4000 batches of 2000
// packets see with fourStateModel: the mean within 4 standard errors of
// the batch means, the mean run within 4 of the runs' lengths, and the
// variance ratio within 4 of its batch estimate's relative error
// sqrt(2/(batches-1)), 9%. (With 2000 packets a batch, the correlation
// the batches miss shifts the ratio by under 0.2% for these chains.)
func TestFourStateModelSimulated(t *testing.T) {
	const batches, size = 4000, 2000
	rng := rand.New(rand.NewPCG(1, 2))
	for _, spec := range []string{"1/30", "0.2/25/0/100/0.8", "1/20/10/40/1", "5/0/30/20", "0/100/0/100/50", "3"} {
		d := fourStateDir(t, spec)
		wantMean, wantBurst, wantRatio := fourStateModel(d.FourState)
		seen := simFourState(d.FourState, batches*size, rng)
		lost, runs := lossRuns(seen)
		mu := float64(lost) / float64(len(seen))
		// The batch means' variance, and the runs' lengths' spread.
		var ss float64
		for b := range batches {
			k, _ := lossRuns(seen[b*size : (b+1)*size])
			ss += math.Pow(float64(k)/size-mu, 2)
		}
		varMeans := ss / (batches - 1)
		var runSS float64
		n := 0
		for i, ok := range seen {
			if !ok {
				n++
			}
			if n > 0 && (ok || i == len(seen)-1) {
				runSS += math.Pow(float64(n)-float64(lost)/float64(runs), 2)
				n = 0
			}
		}
		burst := float64(lost) / float64(runs)
		ratio := varMeans * size / (mu * (1 - mu))
		seMean := 100 * math.Sqrt(varMeans/batches)
		seBurst := math.Sqrt(runSS/float64(runs-1)) / math.Sqrt(float64(runs))
		seRatio := ratio * math.Sqrt(2.0/(batches-1))
		t.Logf("%s: mean %.4f/%.4f (%.4f) burst %.4f/%.4f (%.4f) ratio %.3f/%.3f (%.3f)", spec, 100*mu, wantMean, seMean, burst, wantBurst, seBurst, ratio, wantRatio, seRatio)
		if math.Abs(100*mu-wantMean) > 4*seMean {
			t.Errorf("state:%s: %.4f%% lost in the run, model %.4f%% (standard error %.4f)", spec, 100*mu, wantMean, seMean)
		}
		if math.Abs(burst-wantBurst) > 4*seBurst+1e-12 {
			t.Errorf("state:%s: runs of %.4f in the run, model %.4f (standard error %.4f)", spec, burst, wantBurst, seBurst)
		}
		if math.Abs(ratio-wantRatio) > 4*seRatio {
			t.Errorf("state:%s: variance ratio %.3f in the run, model %.3f (standard error %.3f)", spec, ratio, wantRatio, seRatio)
		}
	}
}

// fourStateDir is the down direction of 80:10,loss=state:spec.
func fourStateDir(t *testing.T, spec string) shapedlink.Direction {
	t.Helper()
	p, err := shapedlink.ParseProfile("80:10,loss=state:" + spec)
	if err != nil {
		t.Fatal(err)
	}
	d := p.Direction(shapedlink.Down)
	if !d.HasFourState {
		t.Fatalf("state:%s: no 4-state model in %+v", spec, d)
	}
	return d
}

// simFourState runs the 4-state chain f for n packets from state 1, one
// uniform draw a step as netem's loss_4state takes them, and reports
// which packets were received.
func simFourState(f shapedlink.FourState, n int, rng *rand.Rand) []bool {
	p13, p31, p32, p23, p14 := f.P13/100, f.P31/100, f.P32/100, f.P23/100, f.P14/100
	seen := make([]bool, n)
	state := 1
	for i := range seen {
		u := rng.Float64()
		switch state {
		case 1:
			switch {
			case u < p14:
				state = 4
			case u < p14+p13:
				state = 3
			}
		case 2:
			if u < p23 {
				state = 3
			}
		case 3:
			switch {
			case u < p32:
				state = 2
			case u < p32+p31:
				state = 1
			}
		case 4:
			state = 1
		}
		seen[i] = state == 1 || state == 2
	}
	return seen
}

// TestReorderShare: with gap 1 the share is the probability; with gap G
// one packet in every G-1 + 1/p goes early (every fifth at 100% and gap 5).
func TestReorderShare(t *testing.T) {
	for _, c := range []struct {
		pct  float64
		gap  int
		want float64
	}{{25, 0, 0.25}, {25, 1, 0.25}, {100, 5, 0.2}, {50, 3, 0.25}, {0, 4, 0}} {
		if got := reorderShare(c.pct, c.gap); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("reorderShare(%v, %d) = %v, want %v", c.pct, c.gap, got, c.want)
		}
	}
}

// TestFitJitter: probes drawn at the configured distribution's own
// quantiles fit it; the same probes shifted by half the jitter, or drawn
// uniformly where normal was configured, do not; the configured
// quantiles are the normal's.
func TestFitJitter(t *testing.T) {
	p, err := shapedlink.ParseProfile("80:10,jitter=5/normal")
	if err != nil {
		t.Fatal(err)
	}
	d := p.Direction(shapedlink.Down)
	cdf := d.JitterCDF()
	const n = 400
	var own, shifted, uniform []time.Duration
	for i := range n {
		u := (float64(i) + 0.5) / n
		x := cdfQuantile(cdf, u, 50*d.Jitter)
		own = append(own, x)
		shifted = append(shifted, x+d.Jitter/2)
		uniform = append(uniform, time.Duration((2*u-1)*float64(d.Jitter)))
	}
	f := fitJitter(own, cdf, d.Jitter, 20*time.Millisecond)
	if !f.Fits || f.KS > 0.01 || math.Abs(f.KSCrit-1.358/20) > 1e-9 {
		t.Errorf("the distribution's own quantiles: KS %.4f crit %.4f fits %v", f.KS, f.KSCrit, f.Fits)
	}
	for i, want := range []float64{-8.224, -3.372, 0, 3.372, 8.224} {
		// The measured quantile is a nearest rank of 400 draws, a
		// quantile level up to 1/800 off.
		if math.Abs(f.Want[i]-want) > 0.05 || math.Abs(f.Meas[i]-want) > 0.1 {
			t.Errorf("p%g: measured %.3f configured %.3f ms, want about %.3f (normal, sd 5 ms)", 100*f.Levels[i], f.Meas[i], f.Want[i], want)
		}
	}
	for name, xs := range map[string][]time.Duration{"shifted by J/2": shifted, "uniform": uniform} {
		if g := fitJitter(xs, cdf, d.Jitter, 0); g.Fits {
			t.Errorf("%s: KS %.4f <= crit %.4f, want a misfit", name, g.KS, g.KSCrit)
		}
	}
	if g := fitJitter(nil, cdf, d.Jitter, 0); g.Probes != 0 || g.Fits {
		t.Errorf("no probes: %+v", g)
	}
}
