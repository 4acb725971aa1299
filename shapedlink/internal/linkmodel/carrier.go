package linkmodel

import "github.com/shakenfist/quicbench/shapedlink/internal/aqm"

// Frames is what a Carrier needs from whoever holds the frames' bytes (the
// emulator's buffers, an in-process link's datagrams): the model decides
// and the carrier keeps the line, but only the holder can copy or free a
// frame. Frames are named by the holder's Refs. The model's edits (a CE
// mark, a corruption) travel with each Held and are made by the carrier
// when the frame leaves, so a duplicate may share the original's bytes.
type Frames interface {
	// Copy makes frame ref, of size bytes, available once more, for a
	// duplicate the model accepted, and returns the duplicate's ref: a
	// copy's, or ref itself where the holder shares the bytes (the
	// duplicate's edit is its Held's, not the original's).
	Copy(ref int64, size int) int64
	// Release gives up one hold on frame ref: the model refused it, or
	// the queue discipline dropped it.
	Release(ref int64)
	// Classify is the flow hash and ECN capability the queue discipline
	// needs (aqm.Classify of the frame's bytes); it is asked only for a
	// direction with a discipline.
	Classify(ref int64, size int) (flow uint32, ect bool)
}

// Carrier is one direction as a carrier drives it: its Model, the Line of
// frames held for their due times, and the Frames that hold their bytes:
// the part of a carrier's loop that the emulator's forwarding loop and the
// in-process link share. For each arriving frame, in arrival order, a
// carrier applies the schedule up to its arrival (Model.Advance), makes
// the discipline's choices up to it (DequeueUpTo), sends every held frame
// due by then (Line, Depart), and judges the frame (Judge). Between
// arrivals it sends frames as they fall due and makes the discipline's
// choices as the link comes free (Model.NextDequeue). As a frame leaves,
// the carrier makes its Held.Edit on the bytes it sends (on a copy, where
// a duplicate shares them). Not safe for concurrent use.
type Carrier struct {
	Model *Model
	Line  Line
	f     Frames
	// OnQueueDrop, when set, is told of each frame the queue discipline
	// drops (by its limit or by CoDel), before the frame is released.
	OnQueueDrop func(ref int64, size int, c aqm.Cause)
}

// NewCarrier returns the carrier of m whose frames f holds, with room in
// its line for capacity frames (Direction.MaxHeld: then it never grows).
func NewCarrier(m *Model, capacity int, f Frames) *Carrier {
	c := &Carrier{Model: m, f: f}
	c.Line.ring = make([]Held, max(capacity, 1))
	if m.HasQueue() {
		m.SetDropFunc(func(ref int64, size int, cause aqm.Cause) {
			if c.OnQueueDrop != nil {
				c.OnQueueDrop(ref, size, cause)
			}
			f.Release(ref)
		})
	}
	return c
}

// Judgement is what Judge decided for one arriving frame: the original's
// verdict, due time and edit, and the same for the duplicate when the
// model made one (DupRef is its copy, NoRef when it was refused). With a
// queue discipline an accepted frame is Enqueued and its due time is set
// when it leaves the queue (DequeueUpTo).
type Judgement struct {
	Verdict  Verdict
	Due      int64
	Edit     Edit
	Enqueued bool

	Dup        bool
	DupVerdict Verdict
	DupDue     int64
	DupEdit    Edit
	DupRef     int64
}

// Judge passes frame ref, of size bytes, arriving at at, through the
// model (steps 1 to 3 of the Carrier's order done first) and acts on the
// verdicts: an accepted frame is held in the line in due order with its
// edit, or queued with a queue discipline (its edit then comes with it
// out of the queue); a refused one is released. A duplicate is judged and
// held before the original, as netem enqueues its clone first, with the
// bytes as they arrived and its own edit.
func (c *Carrier) Judge(at int64, ref int64, size int) (j Judgement) {
	m := c.Model
	if m.HasQueue() {
		flow, ect := c.f.Classify(ref, size)
		j.Verdict = m.Enqueue(at, aqm.Packet{Len: size, Flow: flow, ECT: ect, Ref: ref})
		if j.Verdict != Accepted {
			c.f.Release(ref)
			return j
		}
		j.Enqueued = true
		return j
	}
	j.Due, j.Verdict = m.Arrive(at, size)
	j.Edit, j.DupEdit = m.edits()
	if due, v, queued, _, ok := m.Duplicate(); ok {
		// Only an accepted duplicate is copied: the model then counts it
		// among the frames held, which the holder's buffers are sized
		// for (a refused one, copied first, could find none).
		j.Dup, j.DupDue, j.DupVerdict, j.DupRef = true, due, v, NoRef
		if v == Accepted {
			j.DupRef = c.f.Copy(ref, size)
			c.Line.hold(Held{Due: due, Ref: j.DupRef, Size: int32(size), Queued: queued, Edit: j.DupEdit})
		}
	}
	if j.Verdict != Accepted {
		c.f.Release(ref)
		return j
	}
	c.Line.hold(Held{Due: j.Due, Ref: ref, Size: int32(size), Queued: m.Queued(), Ahead: m.ahead, Edit: j.Edit})
	return j
}

// DequeueUpTo makes the queue discipline's choices up to time t: each
// frame the link takes from the queue is serialised and delayed by the
// model and joins the line for its due time, with its edit (the
// corruption drawn when it was queued, a CE mark where the discipline
// marked it). It does nothing for a direction without a discipline.
func (c *Carrier) DequeueUpTo(t int64) {
	m := c.Model
	if !m.HasQueue() {
		return
	}
	for {
		at, ok := m.NextDequeue()
		if !ok || at > t {
			return
		}
		p, due, e, queued, ok := m.Dequeue(at)
		if !ok {
			continue // the discipline dropped what was left
		}
		c.Line.hold(Held{Due: due, Ref: p.Ref, Size: int32(p.Len), Queued: queued, Ahead: m.ahead, Edit: e})
	}
}

// Depart removes the head of the line, which the carrier has sent (or
// failed to send), and tells the model it has left. The frame's bytes
// are still the carrier's to free.
func (c *Carrier) Depart() Held {
	h := c.Line.pop()
	c.Model.Depart(int(h.Size))
	return h
}
