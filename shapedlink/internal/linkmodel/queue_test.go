package linkmodel

import (
	"slices"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/aqm"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// queueRun drives a model with a queue discipline through dur of a bulk
// flow at twice the 10 Mbit/s rate (1514-byte frames, flow 1) and a sparse
// flow (100-byte frames every 20 ms, flow 2), replaying arrivals and the
// link's choices in time order as the forwarding loop does. It returns
// each flow's sojourn times (dequeue minus arrival) over the second half,
// the departure gaps between consecutive frames, and the drop count.
func queueRun(t *testing.T, q linkspec.Queue, limit int, dur time.Duration) (bulk, sparse []time.Duration, gaps []int64, drops int) {
	t.Helper()
	m := New(Direction{Delay: 10 * time.Millisecond, RateMbit: 10, Limit: limit, Queue: q, Seed: 1}, nil)
	if !m.HasQueue() {
		t.Fatal("HasQueue is false with a Queue")
	}
	m.SetDropFunc(func(int64, int, aqm.Cause) { drops++ })
	var lastStart int64 = -1
	var lastLen int
	arrivals := 0
	drain := func(upTo int64) {
		for {
			at, ok := m.NextDequeue()
			if !ok || at > upTo {
				return
			}
			p, due, _, _, ok := m.Dequeue(at)
			if !ok {
				continue
			}
			if due < at+m.txTime(p.Len)+int64(10*time.Millisecond) {
				t.Fatalf("frame due %d before its serialisation and delay from %d", due, at)
			}
			if lastStart >= 0 {
				gaps = append(gaps, at-lastStart-m.txTime(lastLen))
			}
			lastStart, lastLen = at, p.Len
			m.Depart(p.Len)
			if at >= int64(dur/2) {
				so := time.Duration(at - p.EnqueuedAt())
				if p.Flow == 1 {
					bulk = append(bulk, so)
				} else {
					sparse = append(sparse, so)
				}
			}
		}
	}
	bulkGap, sparseGap := int64(1100*time.Microsecond), int64(20*time.Millisecond)
	nb, ns := int64(0), int64(7*time.Millisecond)
	for now := int64(0); now < int64(dur); {
		flow, size := uint32(1), 1514
		if ns < nb {
			now, flow, size = ns, 2, 100
			ns += sparseGap
		} else {
			now = nb
			nb += bulkGap
		}
		drain(now)
		arrivals++
		if v := m.Enqueue(now, aqm.Packet{Len: size, Flow: flow}); v != Accepted {
			t.Fatalf("arrival %d: %v", arrivals, v)
		}
	}
	drain(int64(dur))
	st := m.queueStats()
	if got := st.Dequeued + st.OverlimitDrops + st.CoDelDrops + uint64(func() int { n, _ := m.QueueLen(); return n }()); got != uint64(arrivals) || int(st.OverlimitDrops+st.CoDelDrops) != drops {
		t.Fatalf("accounting: %d arrivals, queue stats %+v, %d drops reported", arrivals, st, drops)
	}
	if p, _ := m.Held(); p != int(func() int { n, _ := m.QueueLen(); return n }()) {
		t.Fatalf("held %d frames, queue holds the rest", p)
	}
	return bulk, sparse, gaps, drops
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// TestQueueDisciplines: behind a saturated 10 Mbit/s link the link never
// idles while frames wait (every frame starts when the one before ends);
// a FIFO of 1000 frames holds a standing queue of hundreds of
// milliseconds; CoDel keeps it to tens; and FQ-CoDel serves the sparse flow
// ahead of the bulk flow's backlog, within one bulk frame's
// serialisation, where CoDel makes it wait in the shared queue.
func TestQueueDisciplines(t *testing.T) {
	const dur = 10 * time.Second
	tx := time.Duration(1514 * 8 * 100) // ns at 10 Mbit/s: 1.2112 ms

	bulk, _, gaps, _ := queueRun(t, linkspec.Queue{Kind: linkspec.CoDel, Target: time.Hour, Interval: time.Hour}, 1000, dur) // CoDel that never acts: a drop-tail FIFO
	if m := median(bulk); m < 300*time.Millisecond {
		t.Errorf("fifo 1000: bulk sojourn median %v, want a standing queue of hundreds of ms", m)
	}
	for i, g := range gaps {
		if g != 0 {
			t.Fatalf("fifo: gap %d between frames %d and %d on a saturated link", g, i, i+1)
		}
	}

	bulk, sparse, _, drops := queueRun(t, linkspec.Queue{Kind: linkspec.CoDel}, 1000, dur)
	t.Logf("codel: bulk sojourn median %v, sparse median %v, %d drops", median(bulk), median(sparse), drops)
	// The bulk flow does not slow down when dropped (an unresponsive
	// 10% overload), so CoDel's drop rate has to climb to a tenth of the
	// arrivals and the queue oscillates above the target; it is still a
	// small fraction of the FIFO's.
	if m := median(bulk); m < 2*time.Millisecond || m > 50*time.Millisecond || drops == 0 {
		t.Errorf("codel: bulk sojourn median %v with %d drops, want tens of ms at most", m, drops)
	}
	if m := median(sparse); m < 2*time.Millisecond {
		t.Errorf("codel: the sparse flow's median sojourn is %v; in one shared queue it waits behind the standing queue", m)
	}

	bulk, sparse, _, _ = queueRun(t, linkspec.Queue{Kind: linkspec.FQCoDel}, 10240, dur)
	t.Logf("fq_codel: bulk sojourn median %v, sparse max %v", median(bulk), slices.Max(sparse))
	if m := slices.Max(sparse); m > tx {
		t.Errorf("fq_codel: the sparse flow waited up to %v, want at most one bulk frame's serialisation (%v)", m, tx)
	}
	if m := median(bulk); m < 2*time.Millisecond || m > 50*time.Millisecond {
		t.Errorf("fq_codel: bulk sojourn median %v, want CoDel's tens of ms at most", m)
	}
}

// TestQueueIdleLink: on an idle link a frame goes on the wire when it
// arrives, not when the link last finished: its due time is its arrival
// plus its serialisation and the delay.
func TestQueueIdleLink(t *testing.T) {
	m := New(Direction{Delay: 10 * time.Millisecond, RateMbit: 10, Limit: 100, Queue: linkspec.Queue{Kind: linkspec.FQCoDel}, Seed: 1}, nil)
	for _, at := range []int64{0, int64(time.Second), int64(3 * time.Second)} {
		m.Enqueue(at, aqm.Packet{Len: 1000})
		next, ok := m.NextDequeue()
		if !ok || next != at {
			t.Fatalf("frame arriving at %d on an idle link: next dequeue %d (%v)", at, next, ok)
		}
		_, due, _, queued, _ := m.Dequeue(next)
		if want := at + m.txTime(1000) + int64(10*time.Millisecond); due != want || queued {
			t.Errorf("frame arriving at %d: due %d (queued %v), want %d", at, due, queued, want)
		}
		m.Depart(1000)
	}
}
