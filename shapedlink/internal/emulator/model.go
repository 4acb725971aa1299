package emulator

import (
	"math"
	"math/rand/v2"
)

// Verdict is what the model decided for an arriving frame.
type Verdict uint8

const (
	// Accepted frames are held until their due time and then forwarded.
	Accepted Verdict = iota
	// Lost frames were dropped by the random loss, before the limit.
	Lost
	// OverLimit frames were dropped because Limit frames were held.
	OverLimit
)

func (v Verdict) String() string {
	switch v {
	case Accepted:
		return "accepted"
	case Lost:
		return "lost"
	case OverLimit:
		return "over-limit"
	}
	return "verdict(?)"
}

// Model is the arithmetic of one direction, with no clock and no sockets:
// the caller passes the time in, so it can be driven by a fake clock. Times
// are nanoseconds on any monotonic scale. A Model is not safe for
// concurrent use; the shaper gives each direction its own.
type Model struct {
	delay     int64  // ns
	jitter    int64  // ns; the delay is uniform on [delay-jitter, delay+jitter)
	rate      uint64 // bits per second; 0 = unlimited
	limit     int
	lossBelow uint64 // a frame is lost when a uniform uint64 draw is below this
	rng       rand.PCG

	// Gilbert-Elliott: thresholds for uniform uint64 draws, and the state.
	ge                         bool
	geP, geR, geLossG, geLossB uint64
	geBad                      bool

	held      int
	heldBytes int64
	lastDue   int64 // due time of the most recently accepted frame
	queued    bool  // the most recently accepted frame waited for the one ahead
}

// NewModel returns the model of d. It does not validate d; Config.Validate
// does.
func NewModel(d Direction) *Model {
	m := &Model{delay: int64(d.Delay), jitter: int64(d.Jitter), rate: d.RateBitsPerSec, limit: d.Limit}
	if d.LossPct > 0 {
		// P(draw < lossBelow) = lossBelow / 2^64 = LossPct/100.
		m.lossBelow = uint64(math.Ldexp(d.LossPct/100, 64))
	}
	if g := d.GE; g != nil {
		m.ge = true
		m.geP, m.geR = below(g.P), below(g.R)
		m.geLossG, m.geLossB = below(g.OneMinusK), below(g.OneMinusH)
	}
	// The second PCG word is fixed so that the stream depends on Seed only.
	m.rng.Seed(d.Seed, 0x9e3779b97f4a7c15)
	return m
}

// TxTime is how long a frame of size bytes occupies the link: size*8/rate,
// truncated to the nanosecond as netem's packet_time_ns truncates. It is
// zero when the rate is unlimited.
func (m *Model) TxTime(size int) int64 {
	if m.rate == 0 {
		return 0
	}
	return int64(uint64(size) * 8 * 1_000_000_000 / m.rate)
}

// Arrive decides the fate of a frame of size bytes arriving at now. In
// netem's order: the random loss first (a lost frame never counts against
// the limit), then the limit (which counts every frame still held, in the
// rate queue or in the delay line), then the due time. For an accepted
// frame, due is when it leaves the emulated link:
//
//	due = max(now + delay, due of the previous frame still held) + size*8/rate
//
// which is serialisation at the rate followed by the constant delay (see
// the package doc for why netem's formula and "serialise, then delay" are
// the same thing when the delay is constant). The caller must call Depart
// when it forwards the frame.
func (m *Model) Arrive(now int64, size int) (due int64, v Verdict) {
	if m.ge {
		if m.geLost() {
			return 0, Lost
		}
	} else if m.lossBelow != 0 && m.rng.Uint64() < m.lossBelow {
		return 0, Lost
	}
	if m.held >= m.limit {
		return 0, OverLimit
	}
	delay := m.delay
	if m.jitter > 0 {
		// netem's uniform tabledist: (rnd % 2J) - J + D.
		delay += int64(m.rng.Uint64()%uint64(2*m.jitter)) - m.jitter
	}
	start := now + delay
	m.queued = false
	if m.rate != 0 && m.held > 0 && m.lastDue > start {
		start, m.queued = m.lastDue, true
	}
	due = start + m.TxTime(size)
	m.lastDue = due
	m.held++
	m.heldBytes += int64(size)
	return due, Accepted
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

// Queued reports whether the most recently accepted frame had to wait for
// the frame ahead of it (its due time was set by the rate queue, not by
// its arrival and delay).
func (m *Model) Queued() bool { return m.queued }

// Depart records that an accepted frame of size bytes has left.
func (m *Model) Depart(size int) {
	m.held--
	m.heldBytes -= int64(size)
}

// Held is the number of frames and bytes accepted and not yet departed.
func (m *Model) Held() (packets int, bytes int64) { return m.held, m.heldBytes }
