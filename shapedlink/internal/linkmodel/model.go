package linkmodel

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/aqm"
	"github.com/shakenfist/quicbench/shapedlink/internal/disttable"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
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

	// Corruption: netem's u32 probability and its correlated generator.
	corruptU32 uint32
	corruptCor crand

	// Gilbert-Elliott: thresholds for uniform uint64 draws, and the state.
	ge                         bool
	geP, geR, geLossG, geLossB uint64
	geBad                      bool

	// The 4-state model: netem's u32 probabilities and the state (1-4).
	fourState bool
	fs        fourStateChain

	held      int
	heldBytes int64
	lastDue   int64 // due time of the most recently accepted frame
	queued    bool  // the most recently accepted frame waited for the one ahead
	ahead     int64 // how long the most recently accepted frame (not a duplicate) waits for the ones ahead: its due time less its due time on an idle link
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
	onDrop   func(ref int64, size int, c aqm.Cause)

	// c counts what the model decides.
	c *linkspec.Counters
	// sched is the schedule, applied by Advance.
	sched schedule

	// The duplicate made by the most recent Arrive, if any.
	dupMade      bool
	dupEdit      Edit
	edit         Edit // the original's edit
	dupDue       int64
	dupVerdict   Verdict
	dupQueued    bool
	dupReordered bool
}

// New returns the model of d, counting what it decides (drops by cause,
// duplicates, reorders, marks, schedule changes) in c, which the caller
// may share with counters of its own; c may be nil. It does not validate
// d; linkspec's checks do.
func New(d linkspec.Direction, c *linkspec.Counters) *Model {
	if c == nil {
		c = new(linkspec.Counters)
	}
	m := &Model{delay: int64(d.Delay), jitter: int64(d.Jitter), rate: d.RateBits(), limit: d.HeldLimit(), c: c}
	if len(d.TraceMs) > 0 {
		m.rate = 0 // the trace is the rate
	}
	if d.LossPct > 0 {
		// P(draw < lossBelow) = lossBelow / 2^64 = LossPct/100.
		m.lossBelow = uint64(math.Ldexp(d.LossPct/100, 64))
	}
	if g := d.GE; d.HasGE {
		m.ge = true
		m.geP, m.geR = below(g.P), below(g.R)
		m.geLossG, m.geLossB = below(g.OneMinusK), below(g.OneMinusH)
	}
	if f := d.FourState; d.HasFourState {
		n := f.Netem()
		m.fourState = true
		m.fs = fourStateChain{p13: n.P13, p31: n.P31, p32: n.P32, p14: n.P14, p23: n.P23, state: 1}
	}
	if d.JitterDist != "" && d.JitterDist != "uniform" {
		// linkspec has checked the name.
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
	if d.CorruptPct > 0 {
		m.corruptU32 = u32(d.CorruptPct)
		seedCor(&m.corruptCor, d.CorruptCorr)
	}
	if n := len(d.TraceMs); n > 0 {
		m.trace = make([]int64, n)
		for i, ms := range d.TraceMs {
			m.trace[i] = int64(ms) * int64(time.Millisecond)
		}
		m.tracePeriod = m.trace[n-1]
		m.traceLeft = linkspec.TraceOpportunity
	}
	if d.Queue.Managed() {
		// linkspec has checked the configuration.
		m.q, _ = aqm.New(d.Queue.Config(d.Limit), func(p aqm.Packet, cause aqm.Cause) {
			m.held--
			m.heldBytes -= int64(p.Len)
			if cause == aqm.CoDelDrop {
				m.c.CoDelDrops++
			} else {
				m.c.QueueDrops++
			}
			if m.onDrop != nil {
				m.onDrop(p.Ref, p.Len, cause)
			}
		})
	}
	m.sched = newSchedule(d)
	return m
}

// txTime is how long a frame of size bytes occupies the link: size*8/rate,
// truncated to the nanosecond as netem's packet_time_ns truncates. It is
// zero when the rate is unlimited.
func (m *Model) txTime(size int) int64 {
	if m.rate == 0 {
		return 0
	}
	return int64(uint64(size) * 8 * 1_000_000_000 / m.rate)
}

// Arrive decides the fate of a frame of size bytes arriving at now, in
// netem's order (netem_enqueue): duplication, then the loss (a frame both
// duplicated and lost goes through once); a duplicate is judged before
// the original, with its own loss draw (Duplicate reports it); the limit,
// counting every frame still held; reordering (Reordered reports it);
// and the due time,
//
//	due = max(now + delay, due of the previous frame still held) + size*8/rate
//
// with the delay drawn per frame when there is jitter. The package doc
// has the order in full. The caller must call Depart for every frame
// (original or duplicate) it forwards.
func (m *Model) Arrive(now int64, size int) (due int64, v Verdict) {
	due, v = m.arrive(now, size)
	if m.dupMade {
		m.c.Duplicates++
		m.count(m.dupVerdict, m.dupReordered, m.dupEdit)
	}
	m.count(v, m.reordered, m.edit)
	return due, v
}

// count adds a frame's verdict (and, for one accepted, its corruption)
// to the counters.
func (m *Model) count(v Verdict, reordered bool, e Edit) {
	switch v {
	case Lost:
		m.c.LossDrops++
	case OverLimit:
		m.c.LimitDrops++
	case Blackout:
		m.c.BlackoutDrops++
	case Accepted:
		if reordered {
			m.c.Reordered++
		}
		if e.Corrupt {
			m.c.Corrupted++
		}
	}
}

// counters is what the model has counted, in the counters it was given.
func (m *Model) counters() *linkspec.Counters { return m.c }

// arrive is Arrive before the counting.
func (m *Model) arrive(now int64, size int) (due int64, v Verdict) {
	m.dupMade, m.edit, m.dupEdit = false, Edit{}, Edit{}
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
			m.dupEdit = m.corruption(size)
			m.dupDue, m.dupVerdict = m.place(now, size)
			m.dupQueued, m.dupReordered = m.queued, m.reordered
		}
	}
	m.edit = m.corruption(size)
	return m.place(now, size)
}

// Duplicate reports the duplicate the most recent Arrive made, if it
// made one: its due time and verdict (it may itself be lost or over the
// limit), whether it waited in the rate queue and whether it was
// reordered.
func (m *Model) Duplicate() (due int64, v Verdict, queued, reordered, ok bool) {
	return m.dupDue, m.dupVerdict, m.dupQueued, m.dupReordered, m.dupMade
}

// An Edit is what the model decided to do to an accepted frame's bytes.
// The model never holds the bytes; the carrier that does applies the edit
// (Apply) before the frame leaves. A duplicate is copied before the
// original's edit is applied, and has its own.
type Edit struct {
	// Mark sets the frame's IP ECN field to CE (a queue discipline with
	// ecn=on marking rather than dropping; Dequeue decides it).
	Mark bool
	// Corrupt flips bit Bit of the frame (Bit/8 is the byte, counted
	// from the Ethernet header, Bit%8 the bit), netem's corruption.
	Corrupt bool
	Bit     uint32
}

// tag packs e's corruption into a queued packet's Tag (aqm.Packet.Tag),
// for Dequeue: the top bit says corrupt, the low 32 bits the bit.
func (e Edit) tag() uint64 {
	if !e.Corrupt {
		return 0
	}
	return 1<<63 | uint64(e.Bit)
}

// editOfTag is the edit a queued packet's Tag carries.
func editOfTag(t uint64) Edit {
	return Edit{Corrupt: t>>63 != 0, Bit: uint32(t)}
}

// corruption draws netem's corruption for a frame of size bytes that
// survived the loss, as netem_enqueue does: the corrupt probability
// (correlated), then a byte below the frame's length and a bit below 8.
// netem draws the byte below skb_headlen, the frame's linear part, which
// is the whole frame for the emulator's frames.
func (m *Model) corruption(size int) Edit {
	if m.corruptU32 == 0 || m.corruptU32 < m.corruptCor.next(&m.rng) || size <= 0 {
		return Edit{}
	}
	byteAt := m.rng.Uint64() % uint64(size)
	bit := m.rng.Uint64() % 8
	return Edit{Corrupt: true, Bit: uint32(byteAt*8 + bit)}
}

// virtio_net_hdr, as AF_PACKET's PACKET_VNET_HDR carries it before a
// frame: flags, gso_type, hdr_len, gso_size, csum_start, csum_offset.
const (
	vnetLen           = 10
	vnetFNeedsCsum    = 1 // VIRTIO_NET_HDR_F_NEEDS_CSUM
	vnetCsumStartAt   = 6
	vnetCsumOffsetAt  = 8
	csumMangledZero   = 0xffff // CSUM_MANGLED_0: a computed 0 is sent as all ones
	maxCsumFieldReach = 2
)

// Apply makes e's changes to frame, an Ethernet frame; vnet is the
// virtio_net_hdr the frame carries through the emulator's sockets, or nil
// where there is none. Corruption first makes a partial checksum complete
// (as netem's skb_checksum_help does), so the flipped bit is caught by the
// receiver rather than carried inside a checksum nobody checks. (A link
// whose devices have checksum offload off, the emulator's wire-sized
// mode, carries complete checksums already.)
func (e Edit) Apply(frame, vnet []byte) {
	if e.Mark {
		aqm.SetCE(frame)
	}
	if e.Corrupt && int(e.Bit/8) < len(frame) {
		completeChecksum(frame, vnet)
		frame[e.Bit/8] ^= 1 << (e.Bit % 8)
	}
}

// completeChecksum computes the checksum a frame left to be finished
// (VIRTIO_NET_HDR_F_NEEDS_CSUM: the stack seeded the field at
// csum_start+csum_offset with the pseudo-header's sum) over
// frame[csum_start:], writes it, and clears the flag, so the frame now
// carries a complete checksum and the receiver verifies it.
func completeChecksum(frame, vnet []byte) {
	if len(vnet) < vnetLen || vnet[0]&vnetFNeedsCsum == 0 {
		return
	}
	start := int(binary.NativeEndian.Uint16(vnet[vnetCsumStartAt:]))
	at := start + int(binary.NativeEndian.Uint16(vnet[vnetCsumOffsetAt:]))
	if start > len(frame) || at+maxCsumFieldReach > len(frame) {
		return
	}
	var sum uint32
	data := frame[start:]
	for len(data) >= 2 {
		sum += uint32(binary.BigEndian.Uint16(data))
		data = data[2:]
	}
	if len(data) == 1 {
		sum += uint32(data[0]) << 8
	}
	for sum>>16 != 0 {
		sum = sum&0xffff + sum>>16
	}
	c := ^uint16(sum)
	if c == 0 {
		c = csumMangledZero
	}
	binary.BigEndian.PutUint16(frame[at:], c)
	vnet[0] &^= vnetFNeedsCsum
}

// edits are the edits of the most recent Arrive (or Enqueue): its
// original's and, when it made one, its duplicate's.
func (m *Model) edits() (original, duplicate Edit) { return m.edit, m.dupEdit }

// place runs the limit, reordering and delay for a frame that survived
// the loss.
func (m *Model) place(now int64, size int) (due int64, v Verdict) {
	if m.held >= m.limit {
		return 0, OverLimit
	}
	m.queued, m.reordered, m.ahead = false, false, 0
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
	if m.rate != 0 && m.lastDue > start {
		start, m.queued, m.ahead = m.lastDue, true, m.lastDue-start
	}
	due = start + m.txTime(size)
	// With a rate, due is never before lastDue while the frame before is
	// on the link in the model's time (netem's tail reference), whether or
	// not the carrier has sent it yet; without one, jitter alone may put a
	// frame ahead of another, as netem's tfifo does.
	m.lastDue = due
	m.counter++
	return due, Accepted
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
