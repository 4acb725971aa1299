package emulator

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/aqm"
	"github.com/shakenfist/quicbench/shapedlink/internal/disttable"
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
	// Blackout frames were dropped because the schedule had the
	// direction down.
	Blackout
)

func (v Verdict) String() string {
	switch v {
	case Accepted:
		return "accepted"
	case Lost:
		return "lost"
	case OverLimit:
		return "over-limit"
	case Blackout:
		return "blackout"
	}
	return "verdict(?)"
}

// Model is the arithmetic of one direction, with no clock and no sockets:
// the caller passes the time in, so it can be driven by a fake clock. Times
// are nanoseconds on any monotonic scale. A Model is not safe for
// concurrent use; the shaper gives each direction its own.
type Model struct {
	delay     int64 // ns
	jitter    int64 // ns: netem's sigma (uniform: the delay is on [delay-jitter, delay+jitter))
	dist      []int16
	rate      uint64 // bits per second; 0 = unlimited
	limit     int
	lossBelow uint64 // a frame is lost when a uniform uint64 draw is below this
	rng       rand.PCG

	// netem's u32 probabilities and correlated generators, used when a
	// correlation is set (loss) or the process exists (dup, reorder).
	lossU32, dupU32, reorderU32 uint32
	lossCorr                    bool
	gap, counter                uint32
	delayCor, lossCor           crand
	dupCor, reorderCor          crand

	// Gilbert-Elliott: thresholds for uniform uint64 draws, and the state.
	ge                         bool
	geP, geR, geLossG, geLossB uint64
	geBad                      bool

	held      int
	heldBytes int64
	lastDue   int64 // due time of the most recently accepted frame
	queued    bool  // the most recently accepted frame waited for the one ahead
	reordered bool  // the most recently accepted frame was sent at once

	// The schedule's blackout (SetDown): whether the direction is down,
	// whether it holds what arrives meanwhile, and when it comes back up.
	down, hold bool
	upAt       int64
	// The trace (Direction.TraceMs): opportunity times within one period
	// (ns), the period, the global index of the next opportunity a frame
	// may use and the bytes left in it.
	trace       []int64
	tracePeriod int64
	traceK      int64
	traceLeft   int

	// The queue discipline (Direction.Queue), when there is one: the
	// frames waiting for the rate, and when the link is next free.
	q        *aqm.Queue
	linkFree int64
	onDrop   func(ref int32, size int, c aqm.Cause)

	// The duplicate made by the most recent Arrive, if any.
	dupMade      bool
	dupDue       int64
	dupVerdict   Verdict
	dupQueued    bool
	dupReordered bool
}

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
	if d.JitterDist != "" && d.JitterDist != "uniform" {
		// Validate has checked the name.
		m.dist, _ = disttable.Table(d.JitterDist)
	}
	// The second PCG word is fixed so that the stream depends on Seed only.
	m.rng.Seed(d.Seed, 0x9e3779b97f4a7c15)
	// A correlated generator starts from a random value, as netem's
	// init_crandom does; none is drawn for a process that is not
	// correlated, so such a model's stream is what it always was.
	seedCor := func(c *crand, corr float64) {
		if c.rho = uint64(u32(corr)); c.rho != 0 {
			c.last = uint32(m.rng.Uint64() >> 32)
		}
	}
	seedCor(&m.delayCor, d.JitterCorr)
	if d.LossCorr > 0 && d.LossPct > 0 {
		m.lossCorr, m.lossU32 = true, u32(d.LossPct)
		seedCor(&m.lossCor, d.LossCorr)
	}
	if d.DupPct > 0 {
		m.dupU32 = u32(d.DupPct)
		seedCor(&m.dupCor, d.DupCorr)
	}
	if d.ReorderPct > 0 {
		m.reorderU32, m.gap = u32(d.ReorderPct), uint32(max(d.ReorderGap, 1))
		seedCor(&m.reorderCor, d.ReorderCorr)
	}
	if n := len(d.TraceMs); n > 0 {
		m.trace = make([]int64, n)
		for i, ms := range d.TraceMs {
			m.trace[i] = int64(ms) * int64(time.Millisecond)
		}
		m.tracePeriod = m.trace[n-1]
		m.traceLeft = TraceOpportunity
	}
	if d.Queue != nil {
		// Validate has checked the configuration.
		m.q, _ = aqm.New(*d.Queue, func(p aqm.Packet, c aqm.Cause) {
			m.held--
			m.heldBytes -= int64(p.Len)
			if m.onDrop != nil {
				m.onDrop(p.Ref, p.Len, c)
			}
		})
	}
	return m
}

// HasQueue reports whether the direction has a queue discipline
// (Direction.Queue). Its frames then go through Enqueue, NextDequeue and
// Dequeue instead of Arrive: the discipline decides which frame the link
// serialises next, and when, so a frame's due time is known only when it
// leaves the queue.
func (m *Model) HasQueue() bool { return m.q != nil }

// SetDropFunc sets the function told of every frame the queue discipline
// drops (by its limit or by CoDel), with the Ref it was enqueued with, so
// the caller can free it. Enqueue and Dequeue call it.
func (m *Model) SetDropFunc(f func(ref int32, size int, c aqm.Cause)) { m.onDrop = f }

// Enqueue is Arrive for a direction with a queue discipline: the loss
// first, as netem (and Arrive) draws it, then the limit on all frames
// held (the queue and the delay line; sized so that the discipline's own
// limit binds first), then the discipline's enqueue, which may drop this
// frame or others (reported through the drop function, not the verdict).
// Accepted means the frame is queued.
func (m *Model) Enqueue(now int64, p aqm.Packet) Verdict {
	if m.lossEvent() {
		return Lost
	}
	if m.held >= m.limit {
		return OverLimit
	}
	if n, _ := m.q.Len(); n == 0 {
		// An empty queue: the link starts on this frame when it is
		// free, at once if it has been idle.
		m.linkFree = max(m.linkFree, now)
	}
	m.held++
	m.heldBytes += int64(p.Len)
	m.q.Enqueue(now, p)
	return Accepted
}

// NextDequeue is when the link takes its next frame from the queue: when
// it finishes serialising the one before. ok is false when the queue is
// empty.
func (m *Model) NextDequeue() (at int64, ok bool) {
	if m.q == nil {
		return 0, false
	}
	if n, _ := m.q.Len(); n == 0 {
		return 0, false
	}
	return m.linkFree, true
}

// Dequeue takes the frame the discipline gives at now (the time
// NextDequeue returned, with every arrival up to it enqueued) and puts it
// on the wire: serialised from now, then delayed as Arrive delays a frame
// (jitter drawn, and never ahead of the frame before). marked says the
// discipline chose to mark it CE rather than drop it; queued that it
// waited. ok is false when the discipline dropped everything left.
func (m *Model) Dequeue(now int64) (p aqm.Packet, due int64, marked, queued, ok bool) {
	p, marked, ok = m.q.Dequeue(now)
	if !ok {
		return p, 0, false, false, false
	}
	m.linkFree = now + m.TxTime(p.Len)
	due = max(m.linkFree+m.delayDraw(), m.lastDue)
	m.lastDue = due
	return p, due, marked, now > p.EnqueuedAt(), true
}

// QueueLen is the frames and bytes waiting in the queue discipline (zero
// without one).
func (m *Model) QueueLen() (packets int, bytes int64) {
	if m.q == nil {
		return 0, 0
	}
	return m.q.Len()
}

// FlowBacklogs is the discipline's non-empty flow queues (aqm's
// FlowBacklogs), stored in dst[:0]; nil without a discipline.
func (m *Model) FlowBacklogs(dst []aqm.FlowBacklog) []aqm.FlowBacklog {
	if m.q == nil {
		return nil
	}
	return m.q.FlowBacklogs(dst)
}

// fullestFlows sorts fl by bytes held, fullest first (in place), and
// returns at most n of them.
func fullestFlows(fl []aqm.FlowBacklog, n int) []aqm.FlowBacklog {
	slices.SortFunc(fl, func(a, b aqm.FlowBacklog) int { return cmp.Compare(b.Bytes, a.Bytes) })
	return fl[:min(len(fl), n)]
}

// QueueStats are the discipline's counters (zero without one).
func (m *Model) QueueStats() aqm.Stats {
	if m.q == nil {
		return aqm.Stats{}
	}
	return m.q.Stats()
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

// Arrive decides the fate of a frame of size bytes arriving at now, in
// netem's order (netem_enqueue):
//
//  1. duplication is drawn (when configured), then the loss; a frame
//     that is both duplicated and lost goes through once, as in netem,
//     where the two cancel;
//
//  2. a duplicate is judged before the original, as netem enqueues its
//     clone first: its own loss draw (it is never duplicated again),
//     then the limit, reordering and delay below; Duplicate reports it;
//
//  3. the limit, which counts every frame still held, in the rate queue
//     or in the delay line (a lost frame never counts against it);
//
//  4. reordering: after at least gap-1 frames sent normally, a frame is
//     sent at once with the reorder probability, skipping the delay and
//     the rate (Reordered reports it);
//
//  5. the due time:
//
//     due = max(now + delay, due of the previous frame still held) + size*8/rate
//
// which is serialisation at the rate followed by the delay (see the
// package doc for why netem's formula and "serialise, then delay" are the
// same thing when the delay is constant), the delay drawn per frame when
// there is jitter. The caller must call Depart for every frame (original
// or duplicate) it forwards.
func (m *Model) Arrive(now int64, size int) (due int64, v Verdict) {
	m.dupMade = false
	copies := 1
	if m.dupU32 != 0 && m.dupU32 >= m.dupCor.next(&m.rng) {
		copies++
	}
	if m.down && !m.hold {
		return 0, Blackout
	}
	if m.lossEvent() {
		copies--
	}
	if copies == 0 {
		return 0, Lost
	}
	if copies == 2 {
		m.dupMade = true
		if m.lossEvent() {
			m.dupDue, m.dupVerdict, m.dupQueued, m.dupReordered = 0, Lost, false, false
		} else {
			m.dupDue, m.dupVerdict = m.place(now, size)
			m.dupQueued, m.dupReordered = m.queued, m.reordered
		}
	}
	return m.place(now, size)
}

// Duplicate reports the duplicate the most recent Arrive made, if it
// made one: its due time and verdict (it may itself be lost or over the
// limit), whether it waited in the rate queue and whether it was
// reordered.
func (m *Model) Duplicate() (due int64, v Verdict, queued, reordered, ok bool) {
	return m.dupDue, m.dupVerdict, m.dupQueued, m.dupReordered, m.dupMade
}

// lossEvent draws the loss with the configured model.
func (m *Model) lossEvent() bool {
	switch {
	case m.ge:
		return m.geLost()
	case m.lossCorr:
		return m.lossU32 >= m.lossCor.next(&m.rng)
	default:
		return m.lossBelow != 0 && m.rng.Uint64() < m.lossBelow
	}
}

// place runs the limit, reordering and delay for a frame that survived
// the loss.
func (m *Model) place(now int64, size int) (due int64, v Verdict) {
	if m.held >= m.limit {
		return 0, OverLimit
	}
	m.queued, m.reordered = false, false
	m.held++
	m.heldBytes += int64(size)
	if m.gap != 0 && m.counter >= m.gap-1 && m.reorderU32 >= m.reorderCor.next(&m.rng) {
		// Sent at once, ahead of everything held; it takes no time on
		// the link and does not move the rate queue's tail.
		m.counter = 0
		m.reordered = true
		return now, Accepted
	}
	t := now
	if m.down {
		// Held by a blackout: the link takes it once it is back up.
		t, m.queued = max(t, m.upAt), true
	}
	if m.trace != nil {
		depart, waited := m.traceDepart(t, size)
		due = depart + m.delayDraw()
		if m.held > 1 && m.lastDue > due {
			due = m.lastDue
		}
		m.queued = m.queued || waited
		m.lastDue = due
		m.counter++
		return due, Accepted
	}
	start := t + m.delayDraw()
	if m.rate != 0 && m.held > 1 && m.lastDue > start {
		start, m.queued = m.lastDue, true
	}
	due = start + m.TxTime(size)
	// With a rate, due is never before lastDue while frames are held (the
	// latest time_to_send held is netem's reference); without one, jitter
	// alone may put a frame ahead of another, as netem's tfifo does.
	m.lastDue = due
	m.counter++
	return due, Accepted
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

// Queued reports whether the most recently accepted frame had to wait for
// the frame ahead of it (its due time was set by the rate queue, not by
// its arrival and delay).
func (m *Model) Queued() bool { return m.queued }

// Reordered reports whether the most recently accepted frame was sent at
// once by the reordering, ahead of the frames held.
func (m *Model) Reordered() bool { return m.reordered }

// Depart records that an accepted frame of size bytes has left.
func (m *Model) Depart(size int) {
	m.held--
	m.heldBytes -= int64(size)
}

// Held is the number of frames and bytes accepted and not yet departed.
func (m *Model) Held() (packets int, bytes int64) { return m.held, m.heldBytes }

// oppTime is the time of the trace's k-th delivery opportunity, counting
// from 0 across repeats of the period.
func (m *Model) oppTime(k int64) int64 {
	n := int64(len(m.trace))
	return k/n*m.tracePeriod + m.trace[k%n]
}

// firstOppAfter is the index of the first opportunity after t: mm-link
// burns every opportunity up to a frame's arrival before it queues it.
func (m *Model) firstOppAfter(t int64) int64 {
	n := int64(len(m.trace))
	c := max(t, 0) / m.tracePeriod
	r := t - c*m.tracePeriod
	i, _ := slices.BinarySearchFunc(m.trace, r, func(v, r int64) int {
		if v <= r {
			return -1
		}
		return 1
	})
	return c*n + int64(i) // i == n is the next period's first
}

// traceDepart is when a frame of size bytes that the link may start on at
// t leaves under the trace: it takes what is left of the opportunities in
// turn from the first one after t (or from where the frame before it
// finished, if that is later), 1500 bytes each, and leaves at the one
// that carries its last byte; what it leaves of that one goes to the
// next frame, as in mm-link. waited says it leaves later than the first
// opportunity after t (it queued).
func (m *Model) traceDepart(t int64, size int) (depart int64, waited bool) {
	if m.oppTime(m.traceK) <= t {
		// The link went idle: the opportunities until now are lost.
		m.traceK, m.traceLeft = m.firstOppAfter(t), TraceOpportunity
	}
	// It waited if the frames ahead hold the opportunities between t and
	// the one it starts on, or if it needs more than that one.
	k0 := m.traceK
	waited = k0 > 0 && m.oppTime(k0-1) > t
	for size > m.traceLeft {
		size -= m.traceLeft
		m.traceK++
		m.traceLeft = TraceOpportunity
	}
	m.traceLeft -= size
	return m.oppTime(m.traceK), waited || m.traceK > k0
}

// SetRate changes the rate, in bits per second, for frames arriving from
// now on; frames already accepted keep their times, as netem's do when
// it is changed.
func (m *Model) SetRate(bitsPerSec uint64) { m.rate = bitsPerSec }

// SetDelay changes the one-way delay for frames arriving from now on.
func (m *Model) SetDelay(d time.Duration) { m.delay = int64(d) }

// SetLoss changes the loss percentage (independent or correlated, as
// configured; not the Gilbert-Elliott model).
func (m *Model) SetLoss(pct float64) {
	m.lossBelow = 0
	if pct > 0 {
		m.lossBelow = uint64(math.Ldexp(pct/100, 64))
	}
	m.lossU32 = u32(pct)
}

// SetLimit changes the limit on frames held; frames already held above a
// lower limit stay.
func (m *Model) SetLimit(n int) { m.limit = n }

// SetDown starts a blackout: frames arriving are dropped (Blackout), or
// with hold accepted and started on the link no earlier than upAt.
func (m *Model) SetDown(hold bool, upAt int64) { m.down, m.hold, m.upAt = true, hold, upAt }

// SetUp ends a blackout.
func (m *Model) SetUp() { m.down, m.hold = false, false }
