package aqm

import "math"

// codelVars is one CoDel instance's state (RFC 8289 section 5; the names
// follow it).
type codelVars struct {
	// count is the number of drops (or marks) in the current dropping
	// episode, which sets the drop rate; lastCount is what count was
	// when the episode started.
	count, lastCount uint32
	// dropping: in the dropping state.
	dropping bool
	// aboveSet says firstAbove is set: the delay has been at or above
	// target, with more than an mtu queued, since the dequeue that set
	// it. firstAbove is that dequeue's time plus interval, the time from
	// which it is OK to drop.
	aboveSet   bool
	firstAbove int64
	// dropNext is when the next drop is due in the dropping state; it
	// is left as it was on leaving the state, for the count reuse rule.
	dropNext int64
	// dropped says dropNext has been set by a dropping episode, so the
	// count reuse rule has a real previous episode to compare with.
	dropped bool
}

// shouldDrop judges the packet p just taken from the head of a CoDel
// queue at now: it updates the above-target bookkeeping and says whether
// the delay has been at or above target for a whole interval. The mtu
// rule compares the whole Queue's byte backlog, after p left it, with
// mtu: for FQCoDel that is every flow's backlog, as in sch_fq_codel.
func (q *Queue) shouldDrop(v *codelVars, p Packet, now int64) bool {
	if now-p.enq < q.target || q.bytes <= mtu {
		v.aboveSet = false
		return false
	}
	if !v.aboveSet {
		v.aboveSet = true
		v.firstAbove = now + q.interval
		return false
	}
	return now >= v.firstAbove
}

// controlLaw is the time of the next drop after one at t: interval divided
// by the square root of count later.
func (q *Queue) controlLaw(t int64, count uint32) int64 {
	if count == 0 {
		count = 1
	}
	return t + int64(float64(q.interval)/math.Sqrt(float64(count)))
}

// codelDequeue is CoDel's dequeue on flow queue i: the next packet to
// send, after dropping any that CoDel drops; ok is false when the flow
// queue is (or becomes) empty.
func (q *Queue) codelDequeue(i int32, now int64) (p Packet, marked bool, ok bool) {
	f := &q.flows[i]
	v := &f.cv
	if f.packets == 0 {
		// Nothing queued: leave the dropping state. Like Linux, and
		// unlike RFC 8289's pseudocode, this keeps firstAbove: only a
		// packet judged below target (or an mtu of backlog), or a queue
		// emptied by a drop, clears it. For CoDel the last packet out
		// always left at most an mtu behind, so this matters only to
		// FQCoDel, whose mtu rule looks at all flows.
		v.dropping = false
		return Packet{}, false, false
	}
	p = q.pop(i)
	okToDrop := q.shouldDrop(v, p, now)

	if v.dropping {
		if !okToDrop {
			// The delay went below target (or the backlog fell to an
			// mtu): leave the dropping state.
			v.dropping = false
			return p, false, true
		}
		// Drop (or mark) every packet whose time has come; with a high
		// count more than one can be due at the same now.
		for v.dropping && now >= v.dropNext {
			v.count++
			if q.ecn && p.ECT {
				v.dropNext = q.controlLaw(v.dropNext, v.count)
				return p, true, true
			}
			q.drop(p, CoDelDrop)
			if f.packets == 0 {
				v.aboveSet = false
				v.dropping = false
				return Packet{}, false, false
			}
			p = q.pop(i)
			if q.shouldDrop(v, p, now) {
				v.dropNext = q.controlLaw(v.dropNext, v.count)
			} else {
				v.dropping = false
			}
		}
		return p, false, true
	}

	if !okToDrop {
		return p, false, true
	}

	// Enter the dropping state with one drop (or mark) now.
	ok = true
	if q.ecn && p.ECT {
		marked = true
	} else {
		q.drop(p, CoDelDrop)
		if f.packets == 0 {
			v.aboveSet = false
			ok = false
			p = Packet{}
		} else {
			p = q.pop(i)
			// Judged only to keep the above-target bookkeeping current;
			// the next drop waits for dropNext whatever it says.
			q.shouldDrop(v, p, now)
		}
	}
	v.dropping = true
	// If the last episode ended recently, its drop rate was about
	// right: start from the number of drops it made beyond its first
	// rather than from 1. now-dropNext approximates the time since that
	// episode's last drop (dropNext was at most an interval past it).
	if delta := v.count - v.lastCount; delta > 1 && v.dropped && now-v.dropNext < 16*q.interval {
		v.count = delta
	} else {
		v.count = 1
	}
	v.lastCount = v.count
	v.dropNext = q.controlLaw(now, v.count)
	v.dropped = true
	return p, marked, ok
}
