package linkmodel

import (
	"math"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// setRate changes the rate, in bits per second, for frames arriving from
// now on; frames already accepted keep their times, as netem's do when
// it is changed.
func (m *Model) setRate(bitsPerSec uint64) { m.rate = bitsPerSec }

// setDelay changes the one-way delay for frames arriving from now on.
func (m *Model) setDelay(d time.Duration) { m.delay = int64(d) }

// setLoss changes the loss percentage (independent or correlated, as
// configured; not the Gilbert-Elliott model).
func (m *Model) setLoss(pct float64) {
	m.lossBelow = 0
	if pct > 0 {
		m.lossBelow = uint64(math.Ldexp(pct/100, 64))
	}
	m.lossU32 = u32(pct)
}

// setLimit changes the limit on frames held; frames already held above a
// lower limit stay.
func (m *Model) setLimit(n int) { m.limit = n }

// setDown starts a blackout: frames arriving are dropped (Blackout), or
// with hold accepted and started on the link no earlier than upAt.
func (m *Model) setDown(hold bool, upAt int64) { m.down, m.hold, m.upAt = true, hold, upAt }

// setUp ends a blackout.
func (m *Model) setUp() { m.down, m.hold = false, false }

// schedule is a direction's timed changes (linkspec.Direction.Changes),
// repeating every period when there is one, counted across periods: the
// global index of the next change and when it is due.
type schedule struct {
	changes []linkspec.Change
	period  int64
	next    int64
	nextAt  int64 // math.MaxInt64 when no change is left
}

func newSchedule(d linkspec.Direction) schedule {
	s := schedule{changes: d.Changes, period: int64(d.SchedulePeriod)}
	s.nextAt = s.at(0)
	return s
}

// at is when the k-th change (counting across periods) is due, or
// math.MaxInt64 if there is none.
func (s *schedule) at(k int64) int64 {
	n := int64(len(s.changes))
	if n == 0 || s.period == 0 && k >= n {
		return math.MaxInt64
	}
	return k/n*s.period + int64(s.changes[k%n].At)
}

// NextChange is when the schedule's next change is due, on the model's
// time scale (math.MaxInt64 when none is left): a caller that reads
// arrivals in batches must not read past it.
func (m *Model) NextChange() int64 { return m.sched.nextAt }

// Delay is the one-way delay in force (a schedule may change it).
func (m *Model) Delay() int64 { return m.delay }

// Advance applies every scheduled change due at or before t, in time
// order: each applies to the frames arriving from its time on, whenever
// the caller gets to it, as long as it is before those frames arrive. It
// returns how many it applied and when the first of them was due (for the
// caller's account of how late it got to them).
func (m *Model) Advance(t int64) (n int, first int64) {
	s := &m.sched
	for s.nextAt <= t {
		if n == 0 {
			first = s.nextAt
		}
		k := int64(len(s.changes))
		c := s.changes[s.next%k]
		switch c.Set {
		case "rate":
			m.setRate(uint64(math.Round(c.Value * 1e6)))
		case "delay":
			m.setDelay(time.Duration(math.Round(c.Value * 1e6)))
		case "loss":
			m.setLoss(c.Value)
		case "limit":
			m.setLimit(int(c.Value))
		case "down":
			upAt := int64(math.MaxInt64)
			for j := s.next + 1; j <= s.next+k; j++ {
				at := s.at(j)
				if at == math.MaxInt64 {
					break
				}
				if s.changes[j%k].Set == "up" {
					upAt = at
					break
				}
			}
			m.setDown(c.Hold, upAt)
		case "up":
			m.setUp()
		}
		m.c.Changes++
		n++
		s.next++
		s.nextAt = s.at(s.next)
	}
	return n, first
}
