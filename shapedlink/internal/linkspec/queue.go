package linkspec

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/aqm"
)

// Limits on what a direction may hold, one constant each, checked when a
// profile is parsed (and again, by the same code, when the emulator reads
// its configuration).
const (
	MaxRTT      = time.Minute // longest round trip (and one-way delay)
	MaxRateMbit = 100_000     // fastest rate, 100 Gbit/s
	// MaxLimit bounds a packet limit: the emulator preallocates a buffer
	// per packet it may hold (aqm's bound, the one constant).
	MaxLimit = aqm.MaxLimit
	// MaxJitterMs is the largest jitter: netem keeps it, as sigma, in a
	// signed 32-bit count of nanoseconds.
	MaxJitterMs = 2147
)

// DefaultLimit is the packet limit a profile gets unless it names one:
// ceil(1.5 * rate * rtt / (8 * 1500)) + 10, one and a half bandwidth-delay
// products of 1500-byte packets plus ten. It is 110 for 80 ms at 10 Mbit/s,
// the limit the original Rust bench used for that profile.
func DefaultLimit(rateMbit float64, rtt time.Duration) int {
	// Mbit/s * ns = 1e-3 bit; compute in that unit so 80:10 is exact.
	bdpBits := rateMbit * float64(rtt.Nanoseconds()) / 1e3
	pkts := 1.5 * bdpBits / (8 * 1500)
	// The epsilon keeps an exact product from rounding up on a
	// floating-point crumb.
	return int(math.Ceil(pkts-1e-9)) + 10
}

// QueueKind is a queue discipline at a direction's bottleneck: FIFO
// (netem's own drop-tail, the zero value), CoDel or FQCoDel (package aqm,
// which implements them for the emulator).
type QueueKind = aqm.Kind

// The queue disciplines.
const (
	FIFO    = aqm.FIFO
	CoDel   = aqm.CoDel
	FQCoDel = aqm.FQCoDel
)

// Queue is a queue discipline at a direction's bottleneck, as
// tc-codel(8) and tc-fq_codel(8) describe them. Zero fields take the
// kernel's defaults (target 5 ms, interval 100 ms, 1024 flows, quantum
// 1514 bytes); ECN is off unless asked for, for both. Its packet limit is
// the direction's Limit.
type Queue struct {
	Kind     QueueKind
	Target   time.Duration
	Interval time.Duration
	Flows    int // fq_codel only
	Quantum  int // bytes, fq_codel only
	ECN      bool
}

// Managed reports whether q is a discipline rather than netem's own
// drop-tail.
func (q Queue) Managed() bool { return q.Kind != FIFO }

// DefaultQueueLimit is the kernel's default packet limit of a queue
// discipline: 1000 for codel, 10240 for fq_codel.
func DefaultQueueLimit(kind QueueKind) int {
	if kind == FQCoDel {
		return 10240
	}
	return 1000
}

// GE is netem's Gilbert-Elliott loss model (tc-netem's "loss gemodel p r
// 1-h 1-k"), each parameter in percent: from the good state the link
// moves to the bad one with probability P per packet and loses a packet
// with probability OneMinusK; from the bad state it moves back with
// probability R and loses with probability OneMinusH. The loss is drawn
// in the state the packet finds, before the move; the chain starts good.
// With OneMinusH 100 and OneMinusK 0 (the defaults) the mean loss is
// P/(P+R) and a burst of losses lasts 100/R packets on average: 1% loss in
// bursts of 3 is ge:0.3367/33.33, in bursts of 10 ge:0.101/10.
type GE struct {
	P, R, OneMinusH, OneMinusK float64
}

// MeanLoss is the long-run share of packets lost, in percent.
func (g GE) MeanLoss() float64 {
	if g.P+g.R == 0 {
		return g.OneMinusK
	}
	bad := g.P / (g.P + g.R)
	return (1-bad)*g.OneMinusK + bad*g.OneMinusH
}

// String is g as the loss option writes it: ge:p/r[/1-h[/1-k]].
func (g GE) String() string {
	s := "ge:" + FmtNum(g.P) + "/" + FmtNum(g.R)
	if g.OneMinusH != 100 || g.OneMinusK != 0 {
		s += "/" + FmtNum(g.OneMinusH)
	}
	if g.OneMinusK != 0 {
		s += "/" + FmtNum(g.OneMinusK)
	}
	return s
}

// parseGE reads p/r[/1-h[/1-k]] (after "ge:"), percentages.
func parseGE(s string) (GE, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 4 {
		return GE{}, fmt.Errorf("ge:%s has %d parts; want ge:p/r, ge:p/r/1-h or ge:p/r/1-h/1-k, in percent", s, len(parts))
	}
	g := GE{OneMinusH: 100}
	dst := []*float64{&g.P, &g.R, &g.OneMinusH, &g.OneMinusK}
	names := []string{"p", "r", "1-h", "1-k"}
	for i, part := range parts {
		v, err := ParsePct(part)
		if err != nil {
			return GE{}, fmt.Errorf("ge %s %v", names[i], err)
		}
		*dst[i] = v
	}
	return g, nil
}

// Config is q as package aqm runs it, holding at most limit packets.
func (q Queue) Config(limit int) aqm.Config {
	return aqm.Config{Kind: q.Kind, Limit: limit, Target: q.Target, Interval: q.Interval, Flows: q.Flows, Quantum: q.Quantum, ECN: q.ECN}
}
