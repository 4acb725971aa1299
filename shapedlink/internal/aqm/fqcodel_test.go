package aqm

import (
	"testing"
	"time"
)

func mustNew(t testing.TB, c Config, onDrop func(Packet, Cause)) *Queue {
	t.Helper()
	q, err := New(c, onDrop)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func mustDequeue(t *testing.T, q *Queue, now int64) Packet {
	t.Helper()
	p, _, ok := q.Dequeue(now)
	if !ok {
		t.Fatal("Dequeue: queue empty")
	}
	return p
}

// TestFQCoDelSparseFlowFirst: a sparse flow's packet that arrives behind
// a backlog of 100 bulk packets is sent after at most one quantum of bulk
// bytes, not after the backlog: next, when the bulk flows are all on the
// old list. With one bulk flow or four, and whether the sparse flow is
// the same flow each time (and so sometimes still on the old list) or a
// new one.
func TestFQCoDelSparseFlowFirst(t *testing.T) {
	for _, bulkFlows := range []uint32{1, 4} {
		for _, sameFlow := range []bool{true, false} {
			q := mustNew(t, Config{Kind: FQCoDel}, nil)
			quantum := q.quantum
			for i := range 100 {
				q.Enqueue(0, Packet{Len: 1514, Flow: 100 + uint32(i)%bulkFlows, Ref: int64(i)})
			}
			// Send from (and refill) the bulk flows until each has had a
			// turn and all are on the old list.
			send := func(n int) {
				for range n {
					p := mustDequeue(t, q, 0)
					if p.Flow < 100 {
						t.Fatalf("sent flow %d, want a bulk flow", p.Flow)
					}
					q.Enqueue(0, Packet{Len: 1514, Flow: p.Flow, Ref: p.Ref})
				}
			}
			send(2 * int(bulkFlows))
			for round := range 30 {
				send(3)
				sparse := uint32(2)
				if !sameFlow {
					sparse += uint32(round)
				}
				if n, _ := q.Len(); n != 100 {
					t.Fatalf("test setup: %d packets queued", n)
				}
				q.Enqueue(0, Packet{Len: 100, Flow: sparse, Ref: -1})
				bulk := 0
				for {
					p := mustDequeue(t, q, 0)
					if p.Ref == -1 {
						break
					}
					bulk += p.Len
					if bulk > 200*quantum {
						t.Fatalf("%d bulk flows: the sparse packet was not sent in 200 quanta", bulkFlows)
					}
					q.Enqueue(0, Packet{Len: 1514, Flow: p.Flow, Ref: p.Ref})
				}
				if bulk > quantum {
					t.Fatalf("%d bulk flows, same sparse flow %v, round %d: %d bulk bytes were sent before the sparse packet, more than a quantum (%d) of the 100-packet backlog",
						bulkFlows, sameFlow, round, bulk, quantum)
				}
			}
		}
	}
}

// TestFQCoDelDRRFairness: two backlogged flows with different packet
// sizes get the same bytes, each within one quantum of half at every
// point.
func TestFQCoDelDRRFairness(t *testing.T) {
	q := mustNew(t, Config{Kind: FQCoDel}, nil)
	quantum := int64(q.quantum)
	sizes := map[uint32]int{1: 1514, 2: 300}
	for i := range 2000 {
		for f, l := range sizes {
			q.Enqueue(0, Packet{Len: l, Flow: f, Ref: int64(i)})
		}
	}
	got := map[uint32]int64{}
	var total int64
	for i := range 2000 {
		p := mustDequeue(t, q, 0)
		got[p.Flow] += int64(p.Len)
		total += int64(p.Len)
		if d := got[1] - total/2; d > quantum || d < -quantum {
			t.Fatalf("after %d packets: flow 1 (1514-byte packets) had %d bytes and flow 2 (300-byte packets) %d; each should be within a quantum (%d) of half",
				i+1, got[1], got[2], quantum)
		}
	}
	if got[1] < 400_000 || got[2] < 400_000 {
		t.Fatalf("test setup: only %d and %d bytes", got[1], got[2])
	}
}

// TestFQCoDelEmptiedNewFlowGoesToOld: a new flow that empties moves to
// the tail of the old list rather than leaving the lists, so when it
// sends again straight away it is not a new flow again: it waits behind
// the old flow that still has credit (RFC 8290 section 4.2).
func TestFQCoDelEmptiedNewFlowGoesToOld(t *testing.T) {
	q := mustNew(t, Config{Kind: FQCoDel}, nil)
	for i := range 200 {
		q.Enqueue(0, Packet{Len: 100, Flow: 1, Ref: int64(i)})
	}
	// 16 packets spend the bulk flow's first quantum (1514 - 1600 < 0);
	// the 17th is sent from the old list, leaving 1328 bytes of credit.
	for range 17 {
		mustDequeue(t, q, 0)
	}
	if st := q.Stats(); st.NewFlowsLen != 0 || st.OldFlowsLen != 1 {
		t.Fatalf("test setup: new %d old %d flows", st.NewFlowsLen, st.OldFlowsLen)
	}
	q.Enqueue(0, Packet{Len: 100, Flow: 2, Ref: 1000})
	if p := mustDequeue(t, q, 0); p.Ref != 1000 {
		t.Fatalf("sent %d, want the new flow's packet first", p.Ref)
	}
	if p := mustDequeue(t, q, 0); p.Flow != 1 {
		t.Fatalf("sent flow %d, want the bulk flow", p.Flow)
	}
	if st := q.Stats(); st.NewFlowsLen != 0 || st.OldFlowsLen != 2 {
		t.Fatalf("after the new flow emptied: new %d old %d flows, want 0 and 2 (it moved to the old list)", st.NewFlowsLen, st.OldFlowsLen)
	}
	q.Enqueue(0, Packet{Len: 100, Flow: 2, Ref: 1001})
	bulk := 0
	for {
		p := mustDequeue(t, q, 0)
		if p.Ref == 1001 {
			break
		}
		bulk++
	}
	if bulk == 0 {
		t.Fatal("the flow that just emptied got new-flow priority again")
	}
	if bulk != 13 {
		t.Fatalf("%d bulk packets before the flow's second packet, want 13 (the bulk flow's remaining credit of 1328 bytes)", bulk)
	}
	if st := q.Stats(); st.NewFlows != 2 {
		t.Fatalf("NewFlows %d, want 2", st.NewFlows)
	}
	// When the old list is empty an emptied new flow leaves the lists.
	q2 := mustNew(t, Config{Kind: FQCoDel}, nil)
	q2.Enqueue(0, Packet{Len: 100, Flow: 3})
	mustDequeue(t, q2, 0)
	if _, _, ok := q2.Dequeue(0); ok {
		t.Fatal("dequeued from an empty queue")
	}
	if st := q2.Stats(); st.NewFlowsLen != 0 || st.OldFlowsLen != 0 {
		t.Fatalf("new %d old %d flows after emptying, want none", st.NewFlowsLen, st.OldFlowsLen)
	}
}

// TestFQCoDelPerFlowCoDel: each flow queue has its own CoDel. A bulk
// flow with a standing queue is dropped from; a sparse flow sharing the
// link is neither dropped nor delayed.
func TestFQCoDelPerFlowCoDel(t *testing.T) {
	drops := map[uint32]int{}
	q := mustNew(t, Config{Kind: FQCoDel, Limit: MaxLimit}, func(p Packet, c Cause) {
		if c != CoDelDrop {
			t.Fatalf("%v drop", c)
		}
		drops[p.Flow]++
	})
	for range 10000 {
		q.Enqueue(0, Packet{Len: 1000, Flow: 1})
	}
	var worstSparse int64
	sparseSent := 0
	for now := int64(0); now < int64(time.Second); now += us {
		q.Enqueue(now, Packet{Len: 1000, Flow: 1})
		if now%ms == 0 {
			q.Enqueue(now, Packet{Len: 100, Flow: 2})
		}
		if p, _, ok := q.Dequeue(now); ok && p.Flow == 2 {
			sparseSent++
			worstSparse = max(worstSparse, now-p.EnqueuedAt())
		}
	}
	if drops[1] < 5 {
		t.Fatalf("%d drops from the bulk flow's 10 ms standing queue in a second", drops[1])
	}
	if drops[2] != 0 {
		t.Fatalf("%d drops from the sparse flow", drops[2])
	}
	if sparseSent != 1000 || worstSparse > 2*us {
		t.Fatalf("sparse flow: %d of 1000 sent, worst sojourn %v; want all, within 2 us", sparseSent, time.Duration(worstSparse))
	}
}

// TestFQCoDelFlowIndex: the flow queue is Flow % Flows, and
// FlowBacklogs reports the non-empty ones.
func TestFQCoDelFlowIndex(t *testing.T) {
	q := mustNew(t, Config{Kind: FQCoDel, Flows: 8}, nil)
	q.Enqueue(0, Packet{Len: 100, Flow: 3})
	q.Enqueue(0, Packet{Len: 200, Flow: 11})
	q.Enqueue(0, Packet{Len: 50, Flow: 6})
	got := q.FlowBacklogs(make([]FlowBacklog, 5))
	want := []FlowBacklog{{3, 2, 300}, {6, 1, 50}}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("FlowBacklogs %v, want %v", got, want)
	}
	if n, b := q.Len(); n != 3 || b != 350 {
		t.Fatalf("Len %d %d", n, b)
	}
}
