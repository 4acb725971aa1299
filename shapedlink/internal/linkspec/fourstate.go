package linkspec

import (
	"fmt"
	"math"
	"strings"
)

// FourState is netem's 4-state loss model (tc-netem's "loss state p13
// p31 p32 p23 p14", sch_netem.c's loss_4state), each parameter in
// percent. The states are 1, a packet received in a gap; 2, a packet
// received within a burst; 3, a packet lost within a burst; and 4, an
// isolated loss in a gap. Each packet moves the chain one step and is
// lost when the step lands in state 3 or 4: from 1 to 3 with P13 (a
// burst begins) or to 4 with P14, from 3 to 1 with P31 (the burst ends)
// or to 2 with P32, from 2 to 3 with P23, and from 4 always back to 1;
// otherwise the chain stays where it is. It starts in state 1. P13 alone
// (P31 = 100-P13, the others at their defaults) is independent loss of
// P13.
type FourState struct {
	P13, P31, P32, P23, P14 float64
}

// defaultFourState is the model tc's "loss state p13" sets before reading
// the other parameters: P31 100-p13, P32 0, P23 100, P14 0. (P31 is
// rounded to 12 decimals, so that it is the decimal 100-p13: 0.000001,
// not 0.0000009999999974752427, for 99.999999.)
func defaultFourState(p13 float64) FourState {
	return FourState{P13: p13, P31: math.Round((100-p13)*1e12) / 1e12, P23: 100}
}

// MeanLoss is the long-run share of packets lost, in percent, from the
// chain's stationary distribution (the state it settles in when a state
// it can reach is never left).
func (f FourState) MeanLoss() float64 {
	p13, p31, p32, p23, p14 := f.P13/100, f.P31/100, f.P32/100, f.P23/100, f.P14/100
	switch {
	case p13 == 0:
		// Only the gap: state 1, with a visit to 4 after each isolated loss.
		return 100 * p14 / (1 + p14)
	case p32 > 0 && p23 == 0:
		// State 2 is reached from a burst and never left.
		return 0
	case p31 == 0:
		// The burst is entered and never left.
		if p32 == 0 {
			return 100
		}
		return 100 * p23 / (p23 + p32)
	}
	// Per unit of time in state 1: p14 in state 4, p13/p31 in state 3
	// (the flow into and out of the burst balance) and p32/p23 of that
	// in state 2.
	s3 := p13 / p31
	s2 := 0.0
	if p32 > 0 {
		s2 = s3 * p32 / p23
	}
	return 100 * (s3 + p14) / (1 + p14 + s3 + s2)
}

// String is f as the loss option writes it: state:p13[/p31[/p32[/p23[/p14]]]],
// leaving out the trailing parameters that are tc's defaults.
func (f FourState) String() string {
	vals := []float64{f.P13, f.P31, f.P32, f.P23, f.P14}
	def := defaultFourState(f.P13)
	defs := []float64{def.P13, def.P31, def.P32, def.P23, def.P14}
	n := 1
	for i := range vals {
		if FmtNum(vals[i]) != FmtNum(defs[i]) {
			n = i + 1
		}
	}
	parts := make([]string, n)
	for i := range parts {
		parts[i] = FmtNum(vals[i])
	}
	return "state:" + strings.Join(parts, "/")
}

// fourStateNames are the parameters in the order the option (and tc)
// reads them.
var fourStateNames = [5]string{"p13", "p31", "p32", "p23", "p14"}

// parseFourState reads p13[/p31[/p32[/p23[/p14]]]] (after "state:"),
// percentages; those left out take tc's defaults.
func parseFourState(s string) (FourState, error) {
	parts := strings.Split(s, "/")
	if len(parts) > 5 {
		return FourState{}, fmt.Errorf("state:%s has %d parts; want state:p13 followed by up to four of /p31/p32/p23/p14, in percent", s, len(parts))
	}
	var v [5]float64
	for i, part := range parts {
		pct, err := ParsePct(part)
		if err != nil {
			return FourState{}, fmt.Errorf("state %s %v", fourStateNames[i], err)
		}
		v[i] = pct
	}
	f := defaultFourState(v[0])
	dst := []*float64{&f.P13, &f.P31, &f.P32, &f.P23, &f.P14}
	for i := 1; i < len(parts); i++ {
		*dst[i] = v[i]
	}
	return f, f.check()
}

// check says what is wrong with f's parameters, naming the one, or "".
func (f FourState) check() error {
	for i, v := range []float64{f.P13, f.P31, f.P32, f.P23, f.P14} {
		if r := PctReason(v); r != "" {
			return fmt.Errorf("state %s %s %s", fourStateNames[i], FmtNum(v), r)
		}
	}
	// The chances of leaving a state are of one draw, so they add up to
	// at most 1 (netem adds them in a u32, which would wrap).
	if s := f.P13 + f.P14; s > 100+1e-9 {
		return fmt.Errorf("%s has p13+p14 = %s%%: they are the chances of leaving state 1 (a received packet in a gap) for a burst and for an isolated loss, so together at most 100; lower one", f, FmtNum(s))
	}
	if s := f.P31 + f.P32; s > 100+1e-9 {
		return fmt.Errorf("%s has p31+p32 = %s%%: they are the chances of leaving state 3 (a loss in a burst) for a gap and for a received packet in the burst, so together at most 100; lower one", f, FmtNum(s))
	}
	return nil
}

// FourStateNetem is a FourState as netem holds it (struct
// tc_netem_gimodel, in that struct's order): each probability a fraction
// of 2^32-1, rounded as tc rounds it.
type FourStateNetem struct{ P13, P31, P32, P14, P23 uint32 }

// Netem is f as netem holds it. netem compares a draw with p14+p13 and
// with p32+p31 in u32 arithmetic, so where two that add up to 100% round
// to more than 2^32-1 together, p13 (or p31) is one step lower.
func (f FourState) Netem() FourStateNetem {
	n := FourStateNetem{P13: netemU32(f.P13), P31: netemU32(f.P31), P32: netemU32(f.P32), P14: netemU32(f.P14), P23: netemU32(f.P23)}
	n.P13 = min(n.P13, math.MaxUint32-n.P14)
	n.P31 = min(n.P31, math.MaxUint32-n.P32)
	return n
}

// netemU32 is a percentage as a fraction of 2^32-1, rounded, as tc's
// get_percent sends it.
func netemU32(pct float64) uint32 {
	return uint32(math.Round(min(max(pct, 0), 100) / 100 * math.MaxUint32))
}
