package calibrate

import (
	"cmp"
	"fmt"

	"math"
	"slices"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
)

// A full TCP segment on the wire: the Ethernet frame and its payload (the
// MSS with TCP timestamps).
const (
	fullFrame   = 1514
	fullPayload = 1448
)

// wireLimitFloor is the least allowance a wire share may have above 100%:
// no link carries more than its rate, and the window's edges account for
// the last half percent of a long window.
const wireLimitFloor = 100.5

// maxWirePct is the highest wire share a measurement over window at
// rateBits may report: 100% plus what the window's two edges can add (a
// full frame in flight and a millisecond of skew between reading the
// emulator's counter and the clock, at each edge, and the emulator's
// largest lateness: frames due before the window that it wrote inside
// it), and at least wireLimitFloor. A 400 ms window at 10 Mbit/s with a
// punctual emulator allows 101.1%, a 6 s one 100.5%.
func maxWirePct(window time.Duration, rateBits float64, late time.Duration) float64 {
	if window <= 0 {
		return wireLimitFloor
	}
	edges := 2*frameTime(fullFrame, rateBits) + 2*time.Millisecond + max(late, 0)
	return max(wireLimitFloor, 100+100*float64(edges)/float64(window))
}

// checkWire refuses a wire share above limit (maxWirePct): such a figure
// is a measurement error (bytes counted in the window that crossed before
// it), never a result, so it becomes the flow's error instead of a table
// entry.
func checkWire(b *Bulk, limit float64) {
	if b.Error == "" && b.WirePct > limit {
		b.Error = fmt.Sprintf("wire share %.1f%% of the configured rate (%s), above the %.1f%% this window allows: a link cannot carry more than its rate, so this measurement is wrong",
			b.WirePct, b.WireFrom, limit)
	}
}

// quantile is the nearest-rank q-quantile of xs (sorted in place); zero
// for none.
func quantile[T cmp.Ordered](xs []T, q float64) T {
	if len(xs) == 0 {
		var zero T
		return zero
	}
	slices.Sort(xs)
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return xs[max(0, min(i, len(xs)-1))]
}

// Wilson is the 95% Wilson score interval for k successes in n trials,
// as fractions; [0, 1] for none.
func Wilson(k, n int) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	return wilsonEffective(k, n, 1)
}

// frameTime is how long a frame of size bytes occupies a link of rate
// bit/s.
func frameTime(size int, rateBits float64) time.Duration {
	return time.Duration(float64(size) * 8 / rateBits * 1e9)
}

// icmpChecksum is the Internet checksum (RFC 1071) of b, for an ICMP
// message whose checksum field is zero.
func icmpChecksum(b []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

// lossRuns counts the datagrams not seen and the runs of consecutive
// ones (bursts).
func lossRuns(seen []bool) (lost, bursts int) {
	run := false
	for _, ok := range seen {
		if !ok {
			lost++
			if !run {
				bursts++
			}
		}
		run = !ok
	}
	return lost, bursts
}

// lossModel is what a direction's loss should look like: the mean loss in
// percent, the mean burst length in packets (a burst is a run of
// consecutive losses, as lossRuns counts them), and the factor by which
// the bursts inflate the variance of a measured loss fraction (at least
// 1). Independent loss p: bursts of 1/(1-p), no inflation.
// Gilbert-Elliott: the chain's correlation lambda = 1 - p - r makes the
// variance of a long run's loss fraction (1+lambda)/(1-lambda) times the
// binomial one (exact for the simple Gilbert model, an approximation with
// 1-h or 1-k strictly inside (0, 100)); a burst lasts 1/r packets in the
// simple model. The 4-state model: fourStateModel.
func lossModel(d shapedlink.Direction) (meanPct, burst, inflation float64) {
	switch {
	case d.HasFourState:
		meanPct, burst, inflation = fourStateModel(d.FourState)
		return meanPct, burst, max(1, inflation)
	case !d.HasGE:
		p := d.LossPct / 100
		return d.LossPct, 1 / (1 - p), 1
	}
	g := d.GE
	lambda := 1 - g.P/100 - g.R/100
	inflation = 1
	if lambda > 0 && lambda < 1 {
		inflation = (1 + lambda) / (1 - lambda)
	}
	if g.R > 0 {
		burst = 100 / g.R
	}
	return g.MeanLoss(), burst, inflation
}

// fourStateModel is the long run of netem's 4-state chain f started in
// state 1 (shapedlink.FourState has the states): the share of packets
// lost (those whose step lands in state 3 or 4), in percent; the mean
// run of consecutive losses, where an isolated loss (state 4, always
// followed by state 1) is a run of one and a stay in state 3 a run of
// 1/(p31+p32) on average, 0 when nothing is lost or a run never ends; and
// the variance of a long run's loss fraction over the binomial one, from
// the chain's fundamental matrix (below 1 when losses keep apart).
func fourStateModel(f shapedlink.FourState) (meanPct, burst, varRatio float64) {
	p13, p31, p32, p23, p14 := f.P13/100, f.P31/100, f.P32/100, f.P23/100, f.P14/100
	// The transitions, states 1 to 4 at indices 0 to 3.
	tr := [4][4]float64{
		{1 - p13 - p14, 0, p13, p14},
		{0, 1 - p23, p23, 0},
		{p31, p32, 1 - p31 - p32, 0},
		{1, 0, 0, 0},
	}
	pi := fourStateStationary(p13, p31, p32, p23, p14)
	mu := pi[2] + pi[3]
	// Runs begin at each visit to state 4 and each entry to state 3
	// (as many as the exits from it).
	if runs := pi[3] + pi[2]*(p31+p32); runs > 0 {
		burst = mu / runs
	}
	if mu <= 0 || mu >= 1 {
		return 100 * mu, burst, 1
	}
	// The chain's recurrent states (those the chain settles in) and the
	// centred loss on them: g = 1{lost} - mu.
	var idx []int
	for i, v := range pi {
		if v > 0 {
			idx = append(idx, i)
		}
	}
	n := len(idx)
	a := make([][]float64, n)
	g := make([]float64, n)
	for r, i := range idx {
		a[r] = make([]float64, n)
		for c, j := range idx {
			a[r][c] = pi[j] - tr[i][j]
			if r == c {
				a[r][c]++
			}
		}
		if i >= 2 {
			g[r] = 1 - mu
		} else {
			g[r] = -mu
		}
	}
	// h = Z g with Z = (I - P + 1 pi)^-1, the fundamental matrix; the
	// asymptotic variance of the mean of g over a run is
	// 2 <g, h>_pi - <g, g>_pi per packet.
	h := solve(a, slices.Clone(g))
	var sigma2 float64
	for r, i := range idx {
		sigma2 += pi[i] * g[r] * (2*h[r] - g[r])
	}
	return 100 * mu, burst, sigma2 / (mu * (1 - mu))
}

// fourStateStationary is the long-run share of time the 4-state chain
// with these transition probabilities (fractions) spends in each state,
// started in state 1: the stationary distribution of the closed class it
// ends in.
func fourStateStationary(p13, p31, p32, p23, p14 float64) [4]float64 {
	var w [4]float64
	switch {
	case p13 == 0:
		// Only the gap: state 1, and 4 after each isolated loss.
		w = [4]float64{1, 0, 0, p14}
	case p31 == 0 && p32 == 0:
		// State 3 is never left.
		w = [4]float64{0, 0, 1, 0}
	case p32 > 0 && p23 == 0:
		// State 2 is reached from a burst and never left.
		w = [4]float64{0, 1, 0, 0}
	case p31 == 0:
		// The burst, states 2 and 3, is never left.
		w = [4]float64{0, p32, p23, 0}
	default:
		// Per unit of time in state 1: p14 in 4, p13/p31 in 3 (the flows
		// into and out of the burst balance) and p32/p23 of that in 2.
		s3 := p13 / p31
		w = [4]float64{1, 0, s3, p14}
		if p32 > 0 {
			w[1] = s3 * p32 / p23
		}
	}
	sum := w[0] + w[1] + w[2] + w[3]
	for i := range w {
		w[i] /= sum
	}
	return w
}

// solve is x with a x = b, by Gaussian elimination with partial pivoting
// (a and b are overwritten); a must be square and invertible.
func solve(a [][]float64, b []float64) []float64 {
	n := len(b)
	for k := range n {
		p := k
		for r := k + 1; r < n; r++ {
			if math.Abs(a[r][k]) > math.Abs(a[p][k]) {
				p = r
			}
		}
		a[k], a[p] = a[p], a[k]
		b[k], b[p] = b[p], b[k]
		for r := k + 1; r < n; r++ {
			m := a[r][k] / a[k][k]
			for c := k; c < n; c++ {
				a[r][c] -= m * a[k][c]
			}
			b[r] -= m * b[k]
		}
	}
	x := make([]float64, n)
	for k := n - 1; k >= 0; k-- {
		s := b[k]
		for c := k + 1; c < n; c++ {
			s -= a[k][c] * x[c]
		}
		x[k] = s / a[k][k]
	}
	return x
}

// wilsonEffective is the Wilson interval for k losses in n trials whose
// variance is inflation times binomial: the interval of the same fraction
// over n/inflation independent trials.
func wilsonEffective(k, n int, inflation float64) (lo, hi float64) {
	p := float64(k) / float64(n)
	neff := max(1, float64(n)/inflation)
	const z = 1.959963984540054
	den := 1 + z*z/neff
	mid := (p + z*z/(2*neff)) / den
	half := z * math.Sqrt(p*(1-p)/neff+z*z/(4*neff*neff)) / den
	return max(0, mid-half), min(1, mid+half)
}

// The UDP echo's payload, and its frame on the wire with the UDP, IPv4
// and Ethernet headers.
const (
	echoPayload = 64
	echoFrame   = echoPayload + 8 + 20 + 14 // UDP, IPv4, Ethernet
)

// lossRecord is what the loss run's receiver saw: for each datagram
// whether it arrived, how many copies did, and the one-way delay of the
// first (sender and receiver share one clock).
type lossRecord struct {
	seen   []bool
	copies []int
	oneWay []time.Duration
	// changed counts datagrams that arrived with bytes they were not
	// sent with (a number past the run, or padding that is not zero).
	changed int
	// caught is what the receiver's IP and UDP checks dropped during the
	// run (Ip InHdrErrors and Udp InErrors of the client's namespace).
	caught uint64
}

// reorderShare is the share of packets netem's reordering sends at once
// with probability pct after at least gap-1 packets sent normally (gap 0
// taken as 1): one early packet per cycle of gap-1 normal ones and a
// geometric wait, 1/(gap-1 + 1/p).
func reorderShare(pct float64, gap int) float64 {
	p := pct / 100
	if p <= 0 {
		return 0
	}
	return 1 / (float64(max(gap, 1)-1) + 1/p)
}

// dupAndReorder fills r's duplication and reordering figures from the
// loss run, when d has them: the share of datagrams that arrived twice
// (of those that arrived) and the share that arrived in under half the
// one-way delay (sent at once), each with its Wilson interval, beside the
// configured share.
func dupAndReorder(r *Result, rec lossRecord, d shapedlink.Direction) {
	arrived, twice, early := 0, 0, 0
	for i, ok := range rec.seen {
		if !ok {
			continue
		}
		arrived++
		if rec.copies[i] > 1 {
			twice++
		}
		if rec.oneWay[i] < d.Delay/2 {
			early++
		}
	}
	if arrived == 0 {
		return
	}
	if d.DupPct > 0 {
		lo, hi := Wilson(twice, arrived)
		r.DupPct, r.DupLoPct, r.DupHiPct, r.DupWantPct = 100*float64(twice)/float64(arrived), 100*lo, 100*hi, d.DupPct
	}
	if d.ReorderPct > 0 {
		lo, hi := Wilson(early, arrived)
		want := reorderShare(d.ReorderPct, d.ReorderGap)
		r.ReorderPct, r.ReorderLoPct, r.ReorderHiPct, r.ReorderWantPct = 100*float64(early)/float64(arrived), 100*lo, 100*hi, 100*want
	}
}

// corruptFigures fills r's corruption figures from the loss run, when d
// has corruption: the share the receiver's checks caught, against d's
// share times the part of an echoFrame-byte frame they cover (a flip in
// the Ethernet header is not counted: the destination address or the
// type drops the frame before IP, the source address is harmless).
func corruptFigures(r *Result, rec lossRecord, d shapedlink.Direction, sent int) {
	if d.CorruptPct <= 0 || sent == 0 {
		return
	}
	caught := int(min(rec.caught, uint64(sent)))
	lo, hi := Wilson(caught, sent)
	r.CorruptCaughtPct, r.CorruptCaughtLoPct, r.CorruptCaughtHiPct = 100*float64(caught)/float64(sent), 100*lo, 100*hi
	r.CorruptWantPct = d.CorruptPct * float64(echoFrame-14) / echoFrame
	r.CorruptArrived = rec.changed
}

// corruptLoss is the share of datagrams corruption loses on d: every
// flip but those in the Ethernet source address (6 of a frame's bytes).
func corruptLoss(d shapedlink.Direction) float64 {
	return d.CorruptPct / 100 * float64(echoFrame-6) / echoFrame
}

// jitterLevels are the quantiles JitterFit reports.
var jitterLevels = []float64{0.05, 0.25, 0.5, 0.75, 0.95}

// fitJitter compares offsets (each probe's delay beyond the configured
// one, in any order) with the configured distribution cdf of a jitter of
// scale jitter; gap is the probes' spacing, for the record.
func fitJitter(offsets []time.Duration, cdf func(time.Duration) float64, jitter, gap time.Duration) *JitterFit {
	n := len(offsets)
	f := &JitterFit{Probes: n, GapMs: float64(gap) / 1e6, Levels: jitterLevels}
	if n == 0 {
		return f
	}
	xs := slices.Clone(offsets)
	slices.Sort(xs)
	// The one-sample Kolmogorov-Smirnov distance: the empirical CDF
	// steps from i/n to (i+1)/n at xs[i].
	for i, x := range xs {
		F := cdf(x)
		f.KS = max(f.KS, math.Abs(float64(i+1)/float64(n)-F), math.Abs(F-float64(i)/float64(n)))
	}
	f.KSCrit = 1.358 / math.Sqrt(float64(n))
	f.Fits = f.KS <= f.KSCrit
	for _, lv := range jitterLevels {
		f.Meas = append(f.Meas, float64(quantile(xs, lv))/1e6)
		f.Want = append(f.Want, float64(cdfQuantile(cdf, lv, 50*jitter))/1e6)
	}
	return f
}

// cdfQuantile is the smallest x in [-span, span] (to a nanosecond) with
// cdf(x) >= q.
func cdfQuantile(cdf func(time.Duration) float64, q float64, span time.Duration) time.Duration {
	lo, hi := -span, span
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		if cdf(mid) >= q {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}
