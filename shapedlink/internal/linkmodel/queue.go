package linkmodel

import (
	"github.com/shakenfist/quicbench/shapedlink/internal/aqm"
)

// HasQueue reports whether the direction has a queue discipline
// (Direction.Queue). Its frames then go through Enqueue, NextDequeue and
// Dequeue instead of Arrive: the discipline decides which frame the link
// serialises next, and when, so a frame's due time is known only when it
// leaves the queue.
func (m *Model) HasQueue() bool { return m.q != nil }

// SetDropFunc sets the function told of every frame the queue discipline
// drops (by its limit or by CoDel), with the Ref it was enqueued with, so
// the caller can free it. Enqueue and Dequeue call it.
func (m *Model) SetDropFunc(f func(ref int64, size int, c aqm.Cause)) { m.onDrop = f }

// Enqueue is Arrive for a direction with a queue discipline: the loss
// first, as netem (and Arrive) draws it, then the limit on all frames
// held (the queue and the delay line; sized so that the discipline's own
// limit binds first), then the discipline's enqueue, which may drop this
// frame or others (reported through the drop function, not the verdict).
// Accepted means the frame is queued.
func (m *Model) Enqueue(now int64, p aqm.Packet) Verdict {
	m.edit, m.dupEdit, m.dupMade = Edit{}, Edit{}, false
	if m.lossEvent() {
		m.c.LossDrops++
		return Lost
	}
	m.edit = m.corruption(p.Len)
	if m.held >= m.limit {
		m.c.LimitDrops++
		return OverLimit
	}
	p.Tag = m.edit.tag()
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
// (jitter drawn, and never ahead of the frame before). Its edit is what to
// do to its bytes: the corruption drawn when it was enqueued, and a CE
// mark when the discipline chose to mark it rather than drop it; queued
// says it waited. ok is false when the discipline dropped everything
// left. The Packet's Tag is the model's: a caller's is overwritten.
func (m *Model) Dequeue(now int64) (p aqm.Packet, due int64, e Edit, queued, ok bool) {
	p, marked, ok := m.q.Dequeue(now)
	if !ok {
		return p, 0, Edit{}, false, false
	}
	if marked {
		m.c.ECNMarks++
	}
	m.linkFree = now + m.txTime(p.Len)
	idle := p.EnqueuedAt() + m.txTime(p.Len) + m.delayDraw()
	due = max(idle+now-p.EnqueuedAt(), m.lastDue)
	m.lastDue, m.ahead = due, max(0, due-idle)
	e = editOfTag(p.Tag)
	e.Mark = marked
	return p, due, e, now > p.EnqueuedAt(), true
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

// queueStats are the discipline's counters (zero without one).
func (m *Model) queueStats() aqm.Stats {
	if m.q == nil {
		return aqm.Stats{}
	}
	return m.q.Stats()
}
