package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Defaults of RepeatsOptions' zero fields.
const (
	DefaultRepeatsTrials = 2000
	DefaultRepeatsPower  = 0.8
	defaultRepeatsCap    = 100
)

// MinPilotRepeats is the fewest repeats per arm EstimateRepeats reads.
const MinPilotRepeats = 3

// RepeatsModel names the model EstimateRepeats simulates.
const RepeatsModel = "each arm's repeat p95s drawn independently from a normal with the pilot's own median (so the pilot's delta) and the two arms' pooled SD"

// RepeatsOptions tunes EstimateRepeats. A zero field takes its default.
type RepeatsOptions struct {
	// Cap is the largest n per arm tried (100 when zero).
	Cap int
	// Trials is the number of simulated matrices at each n
	// (DefaultRepeatsTrials).
	Trials int
	// Power is the probability of resolving asked for (DefaultRepeatsPower).
	Power float64
	// Seed seeds the simulation; equal seeds give equal estimates.
	Seed uint64
}

// RepeatsEstimate is how many repeats per arm a pilot's spread says two arms
// need before a rule tells them apart.
type RepeatsEstimate struct {
	Model string `json:"model"`
	// Delta is the pilot's median b minus median a; SD the pooled standard
	// deviation of the two arms' values.
	Delta float64 `json:"delta"`
	SD    float64 `json:"sd"`
	// Cap, Trials, Power and Seed are the options in force.
	Cap    int     `json:"cap"`
	Trials int     `json:"trials"`
	Power  float64 `json:"power"`
	Seed   uint64  `json:"seed"`
	// SpreadN is the smallest n per arm at which the spread rule (Compare)
	// resolves with probability at least Power, or 0 when no n up to Cap
	// does; UN the same for the Mann-Whitney U test at p < 0.05.
	SpreadN int `json:"spread_n"`
	UN      int `json:"u_n"`
	// Spread[i] and U[i] are the simulated probabilities of resolving at
	// n = MinPilotRepeats + i.
	Spread []float64 `json:"spread"`
	U      []float64 `json:"u"`
}

// At returns the simulated probabilities of resolving by the spread rule
// and by the U test at n repeats per arm, and false when n was not tried.
func (e RepeatsEstimate) At(n int) (spread, u float64, ok bool) {
	i := n - MinPilotRepeats
	if i < 0 || i >= len(e.Spread) {
		return 0, 0, false
	}
	return e.Spread[i], e.U[i], true
}

// EstimateRepeats estimates from a pilot how many repeats per arm would
// resolve arm b against arm a, given each arm's per-repeat p95s (at least
// MinPilotRepeats each, any unit). At each n from MinPilotRepeats to Cap,
// Trials simulated pairs drawn as RepeatsModel says are read by the spread
// rule (as Compare reads) and by MannWhitney (p < 0.05), and the share
// resolved is that n's probability. More repeats can make the spread rule
// less likely to resolve, so SpreadN is 0 when no n up to Cap reaches
// Power, and Spread holds every n's probability. The simulation is seeded
// by Seed (PCG, one stream per n), so it is deterministic.
// docs/statistics.md says why the model draws from normals.
func EstimateRepeats(a, b []float64, opt RepeatsOptions) (RepeatsEstimate, error) {
	if len(a) < MinPilotRepeats || len(b) < MinPilotRepeats {
		return RepeatsEstimate{}, fmt.Errorf("stats: a repeats estimate needs at least %d pilot repeats per arm (got %d and %d): run a longer pilot", MinPilotRepeats, len(a), len(b))
	}
	for _, x := range append(slices.Clone(a), b...) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return RepeatsEstimate{}, fmt.Errorf("stats: a repeats estimate got %v among the pilot's values: give finite values", x)
		}
	}
	if opt.Cap == 0 {
		opt.Cap = defaultRepeatsCap
	}
	if opt.Trials == 0 {
		opt.Trials = DefaultRepeatsTrials
	}
	if opt.Power == 0 {
		opt.Power = DefaultRepeatsPower
	}
	if opt.Cap < MinPilotRepeats {
		return RepeatsEstimate{}, fmt.Errorf("stats: repeats cap %d: want at least %d", opt.Cap, MinPilotRepeats)
	}
	if opt.Trials < 1 {
		return RepeatsEstimate{}, fmt.Errorf("stats: %d trials: want at least 1", opt.Trials)
	}
	if !(opt.Power > 0 && opt.Power <= 1) {
		return RepeatsEstimate{}, fmt.Errorf("stats: power %v: want a probability in (0, 1]", opt.Power)
	}
	ma, _ := Median(a)
	mb, _ := Median(b)
	e := RepeatsEstimate{
		Model: RepeatsModel, Delta: mb - ma, SD: pooledSD(a, b),
		Cap: opt.Cap, Trials: opt.Trials, Power: opt.Power, Seed: opt.Seed,
	}
	for n := MinPilotRepeats; n <= opt.Cap; n++ {
		ps, pu, err := e.simulate(n)
		if err != nil {
			return RepeatsEstimate{}, err
		}
		e.Spread = append(e.Spread, ps)
		e.U = append(e.U, pu)
		if e.SpreadN == 0 && ps >= opt.Power {
			e.SpreadN = n
		}
		if e.UN == 0 && pu >= opt.Power {
			e.UN = n
		}
	}
	return e, nil
}

// pooledSD is the pooled sample standard deviation of a and b.
func pooledSD(a, b []float64) float64 {
	ss := func(xs []float64) float64 {
		m := 0.0
		for _, x := range xs {
			m += x
		}
		m /= float64(len(xs))
		s := 0.0
		for _, x := range xs {
			s += (x - m) * (x - m)
		}
		return s
	}
	return math.Sqrt((ss(a) + ss(b)) / float64(len(a)+len(b)-2))
}

// simulate returns the shares of e.Trials simulated pairs of n values per
// arm that the spread rule and the U test resolve.
func (e RepeatsEstimate) simulate(n int) (spread, u float64, err error) {
	rng := rand.New(rand.NewPCG(e.Seed, uint64(n)))
	trials := e.Trials
	if e.SD == 0 {
		trials = 1 // every draw is the same
	}
	a, b := make([]float64, n), make([]float64, n)
	pByU := map[float64]float64{} // tie-free p depends on U alone
	var rs, ru int
	for range trials {
		for i := range n {
			a[i] = rng.NormFloat64() * e.SD
			b[i] = e.Delta + rng.NormFloat64()*e.SD
		}
		slices.Sort(a)
		slices.Sort(b)
		if spreadResolves(a, b) {
			rs++
		}
		p, err := uTestP(a, b, pByU)
		if err != nil {
			return 0, 0, err
		}
		if p < 0.05 {
			ru++
		}
	}
	return float64(rs) / float64(trials), float64(ru) / float64(trials), nil
}

// spreadResolves reads sorted a and b by Compare's rule.
func spreadResolves(a, b []float64) bool {
	ma, mb := sortedMedian(a), sortedMedian(b)
	threshold := max(a[len(a)-1]-a[0], b[len(b)-1]-b[0])
	return math.Abs(mb-ma) > threshold
}

// sortedMedian is Median of sorted xs.
func sortedMedian(xs []float64) float64 {
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// uTestP is MannWhitney's p for sorted a and b, remembered by U in cache
// when no value is tied (the p of tie-free samples depends on U alone).
func uTestP(a, b []float64, cache map[float64]float64) (float64, error) {
	tied := false
	var uCount float64 // pairs with a value of a above one of b
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j < len(b) && b[j] == x {
			tied = true
		}
		uCount += float64(j)
	}
	for i := 1; i < len(a) && !tied; i++ {
		tied = a[i] == a[i-1]
	}
	for i := 1; i < len(b) && !tied; i++ {
		tied = b[i] == b[i-1]
	}
	if !tied {
		if p, ok := cache[uCount]; ok {
			return p, nil
		}
	}
	t, err := MannWhitney(a, b)
	if err != nil {
		return 0, err
	}
	if !tied {
		if t.U != uCount {
			return 0, fmt.Errorf("stats: internal error: U counted as %v, MannWhitney says %v", uCount, t.U)
		}
		cache[uCount] = t.P
	}
	return t.P, nil
}
