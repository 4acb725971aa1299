package aqm

import (
	"slices"
	"testing"
)

type dropLog struct {
	refs   []int64
	causes []Cause
}

func (d *dropLog) onDrop(p Packet, c Cause) {
	d.refs = append(d.refs, p.Ref)
	d.causes = append(d.causes, c)
}

// TestOverlimitDropTail: FIFO and CoDel drop the arrival that finds
// Limit packets queued and keep the rest in order.
func TestOverlimitDropTail(t *testing.T) {
	for _, k := range []Kind{FIFO, CoDel} {
		var d dropLog
		q := mustNew(t, Config{Kind: k, Limit: 5}, d.onDrop)
		for i := range 8 {
			q.Enqueue(0, Packet{Len: 100, Ref: int64(i)})
		}
		if !slices.Equal(d.refs, []int64{5, 6, 7}) {
			t.Fatalf("%v: dropped %v, want the three arrivals over the limit, 5 6 7", k, d.refs)
		}
		for _, c := range d.causes {
			if c != overlimit {
				t.Fatalf("%v: cause %v", k, c)
			}
		}
		if n, b := q.Len(); n != 5 || b != 500 {
			t.Fatalf("%v: Len %d %d, want 5 500", k, n, b)
		}
		for i := range 5 {
			if p := mustDequeue(t, q, 0); p.Ref != int64(i) {
				t.Fatalf("%v: sent %d, want %d", k, p.Ref, i)
			}
		}
		// Room again.
		q.Enqueue(0, Packet{Len: 100, Ref: 9})
		if st := q.Stats(); st.OverlimitDrops != 3 || st.Arrivals != 9 || st.Dequeued != 5 {
			t.Fatalf("%v: Stats %+v", k, st)
		}
	}
}

// TestOverlimitFQCoDel: fq_codel over its limit drops from the head of
// the flow with the most bytes, half its bytes at most DropBatch
// packets, even when the arrival belongs to another flow; the arrival
// itself goes when its flow is the fattest; the memory limit acts the
// same way.
func TestOverlimitFQCoDel(t *testing.T) {
	setup := func(c Config) (*Queue, *dropLog) {
		var d dropLog
		c.Kind = FQCoDel
		q := mustNew(t, c, d.onDrop)
		for i := range 8 {
			q.Enqueue(0, Packet{Len: 1000, Flow: 1, Ref: int64(i)})
		}
		q.Enqueue(0, Packet{Len: 1000, Flow: 2, Ref: 100})
		q.Enqueue(0, Packet{Len: 1000, Flow: 2, Ref: 101})
		if len(d.refs) != 0 {
			t.Fatalf("drops %v before the limit", d.refs)
		}
		return q, &d
	}

	q, d := setup(Config{Limit: 10})
	q.Enqueue(0, Packet{Len: 1000, Flow: 2, Ref: 102})
	if !slices.Equal(d.refs, []int64{0, 1, 2, 3}) {
		t.Fatalf("dropped %v, want flow 1's first four packets (half its 8000 bytes)", d.refs)
	}
	got := q.FlowBacklogs(nil)
	if want := []FlowBacklog{{1, 4, 4000}, {2, 3, 3000}}; !slices.Equal(got, want) {
		t.Fatalf("backlogs %v, want %v", got, want)
	}
	if st := q.Stats(); st.OverlimitDrops != 4 || st.OverMemoryDrops != 0 {
		t.Fatalf("Stats %+v", st)
	}
	if c := q.flows[1].cv.count; c != 4 {
		t.Fatalf("flow 1's CoDel count %d, want 4 (raised by the drops)", c)
	}

	q, d = setup(Config{Limit: 10, DropBatch: 3})
	q.Enqueue(0, Packet{Len: 1000, Flow: 2, Ref: 102})
	if !slices.Equal(d.refs, []int64{0, 1, 2}) {
		t.Fatalf("DropBatch 3: dropped %v, want 0 1 2", d.refs)
	}

	// Memory: 10000 bytes queued; 500 more is over a 10000-byte limit.
	q, d = setup(Config{Limit: 100, MemoryLimit: 10000})
	q.Enqueue(0, Packet{Len: 500, Flow: 3, Ref: 200})
	if !slices.Equal(d.refs, []int64{0, 1, 2, 3}) {
		t.Fatalf("over memory: dropped %v, want 0 1 2 3", d.refs)
	}
	if st := q.Stats(); st.OverlimitDrops != 4 || st.OverMemoryDrops != 4 {
		t.Fatalf("over memory: Stats %+v", st)
	}

	// The arrival is the fattest flow's only packet: it is the one dropped.
	var d2 dropLog
	q = mustNew(t, Config{Kind: FQCoDel, Limit: 2}, d2.onDrop)
	q.Enqueue(0, Packet{Len: 100, Flow: 1, Ref: 1})
	q.Enqueue(0, Packet{Len: 100, Flow: 1, Ref: 2})
	q.Enqueue(0, Packet{Len: 1500, Flow: 2, Ref: 3})
	if !slices.Equal(d2.refs, []int64{3}) {
		t.Fatalf("dropped %v, want the arrival 3", d2.refs)
	}
	if n, b := q.Len(); n != 2 || b != 200 {
		t.Fatalf("Len %d %d", n, b)
	}
}
