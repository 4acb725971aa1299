package linkmodel

import (
	"testing"
	"time"
)

const ms = int64(time.Millisecond)

// TestTraceDepartures follows mm-link's rule by hand: opportunities of
// 1500 bytes at 1, 2, 3 and 4 ms, repeating every 4 ms.
func TestTraceDepartures(t *testing.T) {
	m := New(Direction{Limit: 100, TraceMs: []uint32{1, 2, 3, 4}}, nil)
	for _, c := range []struct {
		at     int64
		size   int
		want   int64
		queued bool
		why    string
	}{
		{0, 1000, 1 * ms, false, "the first opportunity after the arrival"},
		{0, 1000, 2 * ms, true, "500 bytes left in the first, the rest in the second"},
		{0, 400, 2 * ms, true, "fits in what the second has left (1000), behind the frames holding the first"},
		{2500000, 1500, 3 * ms, false, "the second opportunity has passed; its 600 bytes are lost"},
		{4500000, 100, 5 * ms, false, "the next period's first opportunity (4 + 1 ms)"},
		{4500000, 3100, 7 * ms, true, "1400 left at 5 ms, 1500 at 6, the last 200 at 7"},
		{8 * ms, 100, 9 * ms, false, "an arrival at an opportunity's own time waits for the next"},
		{10 * ms, 100, 11 * ms, false, "so does one at an opportunity within a period (2 ms into the third)"},
	} {
		due, v := m.Arrive(c.at, c.size)
		if v != Accepted || due != c.want || m.Queued() != c.queued {
			t.Errorf("%d bytes at %v: %v at %v queued %v, want accepted at %v queued %v (%s)", c.size, time.Duration(c.at), v, time.Duration(due), m.Queued(), time.Duration(c.want), c.queued, c.why)
		}
	}
}

// TestTraceSaturated: a saturating flow of 1500-byte frames gets exactly
// the trace's opportunities: over every 1 s window of a 10 s run the
// frames leaving differ from the opportunities in it by at most one.
func TestTraceSaturated(t *testing.T) {
	var tr []uint32
	// An irregular trace: bursts and gaps over a 1.7 s period.
	for ms := uint32(1); ms <= 1700; ms++ {
		for k := uint32(0); k < (ms/100)%4; k++ {
			tr = append(tr, ms)
		}
	}
	tr = append(tr, 1700)
	m := New(Direction{Limit: 1 << 20, TraceMs: tr}, nil)
	var leave []int64
	for at := int64(0); at < 10*int64(time.Second); at += 50000 { // every 50 us: far above the trace's rate
		due, v := m.Arrive(at, 1500)
		if v != Accepted {
			t.Fatalf("frame at %v: %v", time.Duration(at), v)
		}
		leave = append(leave, due)
	}
	opps := func(lo, hi int64) int {
		n := 0
		// Bounded, so a trace that never reaches hi fails rather than hangs.
		for k := int64(0); k < 1<<20; k++ {
			at := m.oppTime(k)
			if at >= hi {
				return n
			}
			if at >= lo {
				n++
			}
		}
		t.Fatalf("the trace's opportunities never reach %v", time.Duration(hi))
		return 0
	}
	for w := int64(0); w < 9; w++ {
		lo, hi := w*int64(time.Second), (w+1)*int64(time.Second)
		got := 0
		for _, d := range leave {
			if d >= lo && d < hi {
				got++
			}
		}
		if want := opps(lo, hi); got < want-1 || got > want+1 {
			t.Errorf("second %d: %d frames left, the trace has %d opportunities", w, got, want)
		}
	}
}

// TestBlackoutDropAndHold: down drops what arrives until up; with hold it
// accepts it and starts it on the link at the up time.
func TestBlackoutDropAndHold(t *testing.T) {
	m := New(Direction{Delay: 10 * time.Millisecond, RateMbit: 8, Limit: 100}, nil)
	m.setDown(false, 50*ms)
	if _, v := m.Arrive(20*ms, 1000); v != Blackout {
		t.Errorf("an arrival while down: %v, want blackout", v)
	}
	m.setUp()
	if due, v := m.Arrive(60*ms, 1000); v != Accepted || due != 71*ms {
		t.Errorf("after up: %v due %v, want accepted at 71ms (10 ms delay, 1 ms at 8 Mbit/s)", v, time.Duration(due))
	}
	m.setDown(true, 100*ms)
	due, v := m.Arrive(80*ms, 1000)
	if v != Accepted || due != 111*ms || !m.Queued() {
		t.Errorf("held: %v due %v queued %v, want accepted at 111ms (up at 100, delay, serialisation), queued", v, time.Duration(due), m.Queued())
	}
	if due, _ := m.Arrive(81*ms, 1000); due != 112*ms {
		t.Errorf("the second held frame is due %v, want 112ms (after the first)", time.Duration(due))
	}
}

// TestSetters: a change applies to the frames arriving after it; those
// accepted before keep their times.
func TestSetters(t *testing.T) {
	m := New(Direction{Delay: 10 * time.Millisecond, RateMbit: 8, Limit: 100}, nil)
	first, _ := m.Arrive(0, 1000) // 1 ms at 8 Mbit/s, 10 ms delay
	m.setRate(800_000)
	m.setDelay(20 * time.Millisecond)
	second, _ := m.Arrive(50*ms, 1000) // 10 ms at 0.8 Mbit/s, 20 ms delay
	if first != 11*ms || second != 80*ms {
		t.Errorf("due %v then %v, want 11ms then 80ms", time.Duration(first), time.Duration(second))
	}
	m.setLoss(99.999)
	lost := 0
	for i := range 1000 {
		if _, v := m.Arrive(int64(100+i)*ms, 100); v == Lost {
			lost++
		}
	}
	if lost < 990 {
		t.Errorf("%d of 1000 lost at 99.999%%", lost)
	}
	m.setLoss(0)
	m.setLimit(1)
	if _, v := m.Arrive(5000*ms, 100); v != OverLimit {
		t.Errorf("with limit 1 and frames held: %v, want over-limit", v)
	}
}
