package aqm

import (
	"math"
	"testing"
	"time"
)

const (
	us = int64(time.Microsecond)
	ms = int64(time.Millisecond)
)

// sim drives a Queue with a fake clock in ticks of 1 us: each tick it
// enqueues some packets stamped with the tick's time and then dequeues
// some, as a link that sends one packet per dequeue would. It records
// every drop and mark with its time, and the start of every streak of
// dequeued packets whose sojourn was at or above target (when CoDel sets
// first_above_time).
type sim struct {
	t       *testing.T
	q       *Queue
	now     int64
	ref     int64
	pkt     Packet // template for arrivals
	target  int64
	drops   []int64 // CoDel drop times
	dropped []Packet
	marks   []int64
	// Streaks of sojourn >= target among returned packets: start times.
	above    bool
	crossing []int64
	// Sojourn range of returned packets since the last resetSojourn.
	minSojourn, maxSojourn int64
	returned               int
}

func newSim(t *testing.T, c Config) *sim {
	t.Helper()
	s := &sim{t: t, pkt: Packet{Len: 1000}}
	q, err := New(c, func(p Packet, cause Cause) {
		if cause != CoDelDrop {
			t.Fatalf("unexpected %v drop at %d", cause, s.now)
		}
		s.drops = append(s.drops, s.now)
		s.dropped = append(s.dropped, p)
	})
	if err != nil {
		t.Fatal(err)
	}
	s.q = q
	s.target = q.target
	s.resetSojourn()
	return s
}

func (s *sim) resetSojourn() { s.minSojourn, s.maxSojourn = math.MaxInt64, math.MinInt64 }

// burst enqueues n packets at the current time.
func (s *sim) burst(n int) {
	for range n {
		p := s.pkt
		p.Ref = s.ref
		s.ref++
		s.q.Enqueue(s.now, p)
	}
}

// run advances d in 1 us ticks, each with arrive arrivals then serve
// dequeues.
func (s *sim) run(d time.Duration, arrive, serve int) {
	for end := s.now + int64(d); s.now < end; s.now += us {
		s.burst(arrive)
		for range serve {
			p, marked, ok := s.q.Dequeue(s.now)
			if !ok {
				continue
			}
			s.returned++
			if marked {
				s.marks = append(s.marks, s.now)
			}
			soj := s.now - p.EnqueuedAt()
			s.minSojourn = min(s.minSojourn, soj)
			s.maxSojourn = max(s.maxSojourn, soj)
			if soj >= s.target {
				if !s.above {
					s.crossing = append(s.crossing, s.now)
				}
				s.above = true
			} else {
				s.above = false
			}
		}
	}
}

func (s *sim) lastCrossing() int64 {
	s.t.Helper()
	if len(s.crossing) == 0 {
		s.t.Fatal("the sojourn never reached the target")
	}
	return s.crossing[len(s.crossing)-1]
}

func codelConfig() Config {
	return Config{Kind: CoDel, Limit: MaxLimit}
}

func fmtMs(t int64) float64 { return float64(t) / float64(ms) }

// TestCoDelTargetAndInterval: a standing queue below target is never
// dropped from; stretches above target shorter than an interval are not
// either, however many of them and however long they add up to; a
// stretch above target for a whole interval starts dropping exactly at
// first_above_time + interval.
func TestCoDelTargetAndInterval(t *testing.T) {
	interval := int64(defaultInterval)

	t.Run("below target", func(t *testing.T) {
		s := newSim(t, codelConfig())
		s.burst(4000) // 4 ms of queue at one packet per us
		s.run(time.Second, 1, 1)
		if len(s.drops) != 0 {
			t.Fatalf("%d drops with the sojourn at most %.3f ms, below the 5 ms target; first at %.3f ms", len(s.drops), fmtMs(s.maxSojourn), fmtMs(s.drops[0]))
		}
		if s.maxSojourn < 4*ms-10*us {
			t.Fatalf("test setup: the sojourn peaked at %.3f ms, not near the target", fmtMs(s.maxSojourn))
		}
	})

	s := newSim(t, codelConfig())
	// Settle at a standing 3 ms queue.
	s.burst(3000)
	s.run(20*time.Millisecond, 1, 1)
	// Three times: a burst takes the sojourn to 6 ms (crossing 5 ms five
	// ms later), stay there until 90-odd ms after the crossing, then
	// serve two per tick until the sojourn is back to 3 ms.
	var above time.Duration
	for cycle := range 3 {
		start := s.now
		s.burst(3000)
		s.run(95*time.Millisecond, 1, 1)
		cross := s.lastCrossing()
		if cross < start {
			t.Fatalf("cycle %d: no crossing of the target", cycle)
		}
		s.run(3*time.Millisecond, 1, 2)
		if s.above {
			t.Fatalf("cycle %d: test setup: the sojourn did not go back below target", cycle)
		}
		above += time.Duration(s.now - cross)
		s.run(20*time.Millisecond, 1, 1)
		if len(s.drops) != 0 {
			t.Fatalf("cycle %d: drop at %.3f ms, %.3f ms after the sojourn reached target at %.3f ms; a drop needs an interval (100 ms) above target without a break",
				cycle, fmtMs(s.drops[0]), fmtMs(s.drops[0]-cross), fmtMs(cross))
		}
	}
	if above < 2*defaultInterval {
		t.Fatalf("test setup: only %v above target in total", above)
	}

	// Now stay above target: the first drop is exactly an interval after
	// the crossing.
	s.burst(3000)
	s.run(300*time.Millisecond, 1, 1)
	cross := s.lastCrossing()
	if len(s.drops) == 0 {
		t.Fatalf("no drop in 300 ms above target")
	}
	if got, want := s.drops[0], cross+interval; got != want {
		t.Fatalf("first drop at %.3f ms, want first_above_time %.3f ms + interval = %.3f ms", fmtMs(got), fmtMs(cross), fmtMs(want))
	}
}

// controlLawTimes checks that drops[0:] are the drops of one dropping
// episode that started with count c0: drop k (k >= 1) is due
// interval/sqrt(c0+k-1) after drop k-1's due time (the count as it was
// after drop k-1), and happens at the first 1 us tick at or after it.
func controlLawTimes(t *testing.T, drops []int64, c0 int, n int) {
	t.Helper()
	if len(drops) < n+1 {
		t.Fatalf("only %d drops, want at least %d: %v", len(drops), n+1, drops)
	}
	due := float64(drops[0])
	for k := 1; k <= n; k++ {
		count := c0 + k - 1
		due += float64(defaultInterval) / math.Sqrt(float64(count))
		got := float64(drops[k])
		if got < due-1 || got > due+float64(us) {
			t.Fatalf("drop %d at %.6f ms, want %.6f ms (within 1 us): interval/sqrt(%d) after the previous due time; drops %v",
				k, got/float64(ms), due/float64(ms), count, drops[:n+1])
		}
	}
}

// TestCoDelControlLaw: under a constant overload the drops in the
// dropping state are interval/sqrt(count) apart.
func TestCoDelControlLaw(t *testing.T) {
	s := newSim(t, codelConfig())
	s.burst(10000) // 10 ms standing queue; one arrival and one departure per us
	s.run(480*time.Millisecond, 1, 1)
	// The sojourn crosses 5 ms at 5 ms; the first drop is at 105 ms.
	if len(s.drops) == 0 || s.drops[0] != 105*ms {
		t.Fatalf("first drop at %v, want 105 ms", s.drops)
	}
	controlLawTimes(t, s.drops, 1, 6)
	if len(s.drops) != 7 {
		t.Fatalf("%d drops by 480 ms, want 7 (due at 105, 205, 275.7, 333.4, 383.4, 428.1, 468.9 ms): %v", len(s.drops), s.drops)
	}
}

// TestCoDelLeaveAndReenter: the dropping state ends when the sojourn
// falls below target; re-entering soon after (within 16 intervals of the
// last scheduled drop) starts from the last episode's count minus its
// starting count, and re-entering later starts from 1. Either way a new
// episode needs a whole interval above target first.
func TestCoDelLeaveAndReenter(t *testing.T) {
	overload := func(t *testing.T) *sim {
		s := newSim(t, codelConfig())
		s.burst(10000)
		s.run(400*time.Millisecond, 1, 1)
		// Drops at 105, 205, 275.7, 333.4, 383.4 ms: count 5, lastcount 1.
		if len(s.drops) != 5 {
			t.Fatalf("%d drops in the first 400 ms, want 5: %v", len(s.drops), s.drops)
		}
		// Serve two per tick: the sojourn falls from 10 ms to 3 ms,
		// below target at about 405 ms, with thousands still queued.
		s.run(7*time.Millisecond, 1, 2)
		if s.above {
			t.Fatal("test setup: the sojourn is still above target")
		}
		if n, _ := s.q.Len(); n < 2000 {
			t.Fatalf("test setup: only %d packets queued", n)
		}
		return s
	}
	reenter := func(t *testing.T, s *sim) []int64 {
		before := len(s.drops)
		s.burst(3000)
		s.run(400*time.Millisecond, 1, 1)
		cross := s.lastCrossing()
		d := s.drops[before:]
		if len(d) == 0 {
			t.Fatal("no drops after re-entering")
		}
		if d[0] != cross+int64(defaultInterval) {
			t.Fatalf("re-entry drop at %.3f ms, want a whole interval after the sojourn reached target at %.3f ms", fmtMs(d[0]), fmtMs(cross))
		}
		return d
	}

	t.Run("soon", func(t *testing.T) {
		s := overload(t)
		// 100 ms at a 3 ms sojourn: the scheduled drop at 428.1 ms
		// passes without a drop.
		s.run(100*time.Millisecond, 1, 1)
		if len(s.drops) != 5 {
			t.Fatalf("drops below target at %v", s.drops[5:])
		}
		// Back above target about 110 ms after the last drop: count
		// starts at 5-1 = 4, so the second drop comes interval/sqrt(4)
		// after the first.
		controlLawTimes(t, reenter(t, s), 4, 4)
	})

	t.Run("late", func(t *testing.T) {
		s := overload(t)
		s.run(2*time.Second, 1, 1) // more than 16 intervals
		if len(s.drops) != 5 {
			t.Fatalf("drops below target at %v", s.drops[5:])
		}
		controlLawTimes(t, reenter(t, s), 1, 4)
	})
}

// TestCoDelMTURule: with no more than one mtu queued behind the head,
// CoDel does not drop however long the packets waited.
func TestCoDelMTURule(t *testing.T) {
	run := func(length int) *sim {
		s := newSim(t, codelConfig())
		s.pkt.Len = length
		// A packet every 10 ms, and one leaves whenever three are
		// queued: each waits 20 ms, with two packets behind it.
		for range 100 {
			s.burst(1)
			if n, _ := s.q.Len(); n > 2 {
				s.run(time.Microsecond, 0, 1)
			}
			s.now += 10 * ms
		}
		if s.maxSojourn < 20*ms {
			t.Fatalf("test setup: the sojourn peaked at %v", time.Duration(s.maxSojourn))
		}
		return s
	}
	if s := run(700); len(s.drops) != 0 {
		t.Fatalf("%d drops with 1400 bytes (<= MTU 1514) behind a head that waited 20 ms", len(s.drops))
	}
	if s := run(800); len(s.drops) == 0 {
		t.Fatal("no drops with 1600 bytes (> MTU 1514) behind a head that waited 20 ms")
	}
}
