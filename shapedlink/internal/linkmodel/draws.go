package linkmodel

import (
	"math"
	"math/rand/v2"

	"github.com/shakenfist/quicbench/shapedlink/internal/disttable"
)

// crand is netem's correlated uniform generator (get_crandom): each value
// is a fresh uniform u32 mixed with the previous value by rho/2^32. With
// rho zero it is the fresh value.
type crand struct {
	last uint32
	rho  uint64
}

func (c *crand) next(rng *rand.PCG) uint32 {
	v := uint32(rng.Uint64() >> 32)
	if c.rho == 0 {
		return v
	}
	r := c.rho + 1
	c.last = uint32((uint64(v)*((1<<32)-r) + uint64(c.last)*r) >> 32)
	return c.last
}

// u32 is netem's encoding of a percentage as a fraction of 2^32-1, as tc
// sends it.
func u32(pct float64) uint32 {
	if pct >= 100 {
		return math.MaxUint32
	}
	if pct <= 0 {
		return 0
	}
	return uint32(math.Round(pct / 100 * math.MaxUint32))
}

// lossEvent draws the loss with the configured model.
func (m *Model) lossEvent() bool {
	switch {
	case m.ge:
		return m.geLost()
	case m.fourState:
		return m.fs.lost(uint32(m.rng.Uint64() >> 32))
	case m.lossCorr:
		return m.lossU32 >= m.lossCor.next(&m.rng)
	default:
		return m.lossBelow != 0 && m.rng.Uint64() < m.lossBelow
	}
}

// delayDraw is netem's tabledist: the delay, and with jitter a draw from
// the uniform distribution on [delay-jitter, delay+jitter) or from the
// table, scaled by jitter as sigma.
func (m *Model) delayDraw() int64 {
	if m.jitter == 0 {
		return m.delay
	}
	rnd := m.delayCor.next(&m.rng)
	if m.dist == nil {
		return int64(uint64(rnd)%uint64(2*m.jitter)) + m.delay - m.jitter
	}
	t := int64(m.dist[uint64(rnd)%uint64(len(m.dist))])
	x := (m.jitter % disttable.Scale) * t
	if x >= 0 {
		x += disttable.Scale / 2
	} else {
		x -= disttable.Scale / 2
	}
	return x/disttable.Scale + (m.jitter/disttable.Scale)*t + m.delay
}

// geLost runs one step of the Gilbert-Elliott chain (see GE): the move
// and then the loss, the loss drawn with the state the frame found.
func (m *Model) geLost() bool {
	if !m.geBad {
		m.geBad = m.rng.Uint64() < m.geP
		return m.rng.Uint64() < m.geLossG
	}
	m.geBad = m.rng.Uint64() >= m.geR
	return m.rng.Uint64() < m.geLossB
}

// below is the threshold a uniform uint64 draw falls below with
// probability pct percent (100% gives the largest value, missing 1 in 2^64).
func below(pct float64) uint64 {
	if pct >= 100 {
		return math.MaxUint64
	}
	return uint64(math.Ldexp(pct/100, 64))
}

// fourStateChain is netem's 4-state loss model (see linkspec.FourState)
// as loss_4state runs it: the transition probabilities as netem's u32
// fractions, and the state, 1 to 4.
type fourStateChain struct {
	p13, p31, p32, p14, p23 uint32
	state                   uint8
}

// lost moves the chain one step with the draw rnd, as loss_4state does,
// and reports whether the frame is lost (the step lands in state 3 or 4).
// The comparisons are netem's, sums in u32 and strict: a draw equal to a
// boundary moves nothing and loses nothing.
func (c *fourStateChain) lost(rnd uint32) bool {
	switch c.state {
	case 1:
		switch {
		case rnd < c.p14:
			c.state = 4
			return true
		case c.p14 < rnd && rnd < c.p13+c.p14:
			c.state = 3
			return true
		}
	case 2:
		if rnd < c.p23 {
			c.state = 3
			return true
		}
	case 3:
		switch {
		case rnd < c.p32:
			c.state = 2
		case c.p32 < rnd && rnd < c.p31+c.p32:
			c.state = 1
		case c.p31+c.p32 < rnd:
			return true
		}
	case 4:
		c.state = 1
	}
	return false
}
