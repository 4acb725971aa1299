package linkmodel

import "github.com/shakenfist/quicbench/shapedlink/internal/aqm"

// Frames is what a Carrier needs from whoever holds the frames' bytes (the
// emulator's buffers, an in-process link's datagrams): the model decides
// and the carrier keeps the line, but only the holder can copy, change or
// free a frame. Frames are named by the holder's Refs.
type Frames interface {
	// Copy copies frame ref, of size bytes, for a duplicate the model
	// accepted, before the original's edit is applied (netem clones
	// before it mangles), and returns the copy's ref.
	Copy(ref int32, size int) int32
	// Edit applies e, never the zero Edit, to frame ref.
	Edit(ref int32, size int, e Edit)
	// Release frees frame ref: the model refused it, or the queue
	// discipline dropped it.
	Release(ref int32)
	// Classify is the flow hash and ECN capability the queue discipline
	// needs (aqm.Classify of the frame's bytes); it is asked only for a
	// direction with a discipline.
	Classify(ref int32, size int) (flow uint32, ect bool)
}

// Carrier is one direction as a carrier drives it: its Model, the Line of
// frames held for their due times, and the Frames that hold their bytes.
// It is the part of a carrier's loop that every carrier shares (the
// emulator's forwarding loop and the in-process link); what differs
// (where frames come from, how they leave, what time it is) stays with
// the carrier.
//
// For each arriving frame, in arrival order and at its arrival time at,
// a carrier must:
//
//  1. apply the schedule up to at (Model.Advance);
//  2. make the queue discipline's choices up to at (DequeueUpTo);
//  3. send every held frame due at or before at (Line, Depart), so the
//     limit sees what it would have seen at that instant;
//  4. judge the frame (Judge).
//
// Between arrivals it sends frames as they fall due and makes the
// discipline's choices as the link comes free (Model.NextDequeue),
// once every arrival up to then has been judged. Not safe for
// concurrent use.
type Carrier struct {
	Model *Model
	Line  Line
	f     Frames
	// OnQueueDrop, when set, is told of each frame the queue discipline
	// drops (by its limit or by CoDel), before the frame is released.
	OnQueueDrop func(ref int32, size int, c aqm.Cause)
}

// NewCarrier returns the carrier of m whose frames f holds, with room in
// its line for capacity frames (Direction.MaxHeld: then it never grows).
func NewCarrier(m *Model, capacity int, f Frames) *Carrier {
	c := &Carrier{Model: m, f: f}
	c.Line.ring = make([]Held, max(capacity, 1))
	if m.HasQueue() {
		m.SetDropFunc(func(ref int32, size int, cause aqm.Cause) {
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
	DupRef     int32
}

// Judge passes frame ref, of size bytes, arriving at at, through the
// model (steps 1 to 3 of the Carrier's order done first) and acts on the
// verdicts: an accepted frame is edited and held in the line in due
// order, or queued with a queue discipline; a refused one is released.
// A duplicate is judged, copied and held before the original, as netem
// enqueues its clone first.
func (c *Carrier) Judge(at int64, ref int32, size int) (j Judgement) {
	m := c.Model
	if m.HasQueue() {
		flow, ect := c.f.Classify(ref, size)
		j.Verdict = m.Enqueue(at, aqm.Packet{Len: size, Flow: flow, ECT: ect, Ref: ref})
		if j.Verdict != Accepted {
			c.f.Release(ref)
			return j
		}
		j.Enqueued = true
		j.Edit, _ = m.Edits()
		c.edit(ref, size, j.Edit)
		return j
	}
	j.Due, j.Verdict = m.Arrive(at, size)
	j.Edit, j.DupEdit = m.Edits()
	if due, v, queued, _, ok := m.Duplicate(); ok {
		// Only an accepted duplicate is copied: the model then counts it
		// among the frames held, which the holder's buffers are sized
		// for (a refused one, copied first, could find none).
		j.Dup, j.DupDue, j.DupVerdict, j.DupRef = true, due, v, NoRef
		if v == Accepted {
			j.DupRef = c.f.Copy(ref, size)
			c.edit(j.DupRef, size, j.DupEdit)
			c.Line.hold(Held{Due: due, Ref: j.DupRef, Size: int32(size), Queued: queued})
		}
	}
	if j.Verdict != Accepted {
		c.f.Release(ref)
		return j
	}
	c.edit(ref, size, j.Edit)
	c.Line.hold(Held{Due: j.Due, Ref: ref, Size: int32(size), Queued: m.Queued()})
	return j
}

// DequeueUpTo makes the queue discipline's choices up to time t: each
// frame the link takes from the queue is serialised and delayed by the
// model and joins the line for its due time; one the discipline marks
// gets CE set. It does nothing for a direction without a discipline.
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
		p, due, marked, queued, ok := m.Dequeue(at)
		if !ok {
			continue // the discipline dropped what was left
		}
		c.edit(p.Ref, p.Len, Edit{Mark: marked})
		c.Line.hold(Held{Due: due, Ref: p.Ref, Size: int32(p.Len), Queued: queued})
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

// edit applies e to frame ref unless it changes nothing.
func (c *Carrier) edit(ref int32, size int, e Edit) {
	if e != (Edit{}) {
		c.f.Edit(ref, size, e)
	}
}
