package aqm

import (
	"testing"
	"time"
)

// FuzzQueue runs arbitrary Enqueue/Dequeue/clock sequences against every
// discipline with small limits and short CoDel times, and checks against
// a shadow model of what is queued: nothing panics; every packet
// returned or dropped was queued and is taken from the head of its flow
// queue (except an arrival refused outright by FIFO or CoDel); no more
// packets come out than went in; Len, FlowBacklogs and Stats agree with
// the model; a failed Dequeue means an empty queue; only ECN-capable
// packets are marked, and only with ECN on.
func FuzzQueue(f *testing.F) {
	f.Add([]byte{0, 4, 2, 0, 1, 1, 0x41, 1, 0x81, 2, 0xff, 2, 2, 3})
	f.Add([]byte{1, 3, 1, 0, 0, 0, 0xfd, 7, 0xfd, 7, 0xfd, 7, 0xfd, 7, 0xff, 2, 0xff, 2, 0xff, 2})
	f.Add([]byte{6, 7, 3, 1, 3, 1, 0x55, 1, 0x59, 2, 0x5d, 3, 0x61, 4, 0xfb, 2, 2, 0xff, 2, 2, 2, 2})
	f.Add([]byte{5, 0, 0, 9, 9, 9, 0xf1, 0, 0xf1, 1, 0xf1, 2, 0xf1, 3, 0xf1, 4, 0xf1, 5, 0x13, 0x13, 0x13, 2, 2, 2, 2, 2, 2, 2})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 6 {
			return
		}
		c := Config{
			Kind:        Kind(data[0] % 3),
			ECN:         data[0]&4 != 0,
			Limit:       1 + int(data[1]%16),
			Flows:       1 + int(data[2]%8),
			DropBatch:   1 + int(data[3]%4),
			MemoryLimit: 1500 + int64(data[3]>>2)*400,
			Quantum:     minQuantum + int(data[4]%8)*200,
			Target:      time.Duration(1+data[5]%8) * 100 * time.Microsecond,
			Interval:    time.Duration(1+data[5]>>3) * time.Millisecond,
		}
		type shadow struct {
			p   Packet
			idx int
		}
		var (
			now      int64
			ref      int64
			queued   = map[int64]shadow{}
			perFlow  = map[int][]int64{} // refs in queue order per flow queue
			enqueued int
			out      int
			lastIn   int64 = -1
		)
		index := func(p Packet) int {
			if c.Kind == FQCoDel {
				return int(p.Flow % uint32(c.Flows))
			}
			return 0
		}
		// take removes ref from the model and checks it was at the head
		// of its flow queue.
		take := func(p Packet, what string) {
			s, ok := queued[p.Ref]
			if !ok {
				t.Fatalf("%s %d, which is not queued", what, p.Ref)
			}
			fq := perFlow[s.idx]
			if len(fq) == 0 || fq[0] != p.Ref {
				t.Fatalf("%s %d from flow queue %d, whose head is %v", what, p.Ref, s.idx, fq)
			}
			if s.p.Len != p.Len || s.p.Flow != p.Flow || s.p.ECT != p.ECT || p.EnqueuedAt() > now {
				t.Fatalf("%s %d came back as %+v, queued as %+v", what, p.Ref, p, s.p)
			}
			perFlow[s.idx] = fq[1:]
			delete(queued, p.Ref)
		}
		q, err := New(c, func(p Packet, cause Cause) {
			if cause == overlimit && c.Kind != FQCoDel {
				// Drop-tail: the arrival, never queued.
				fq := perFlow[0]
				if p.Ref != lastIn || len(fq) == 0 || fq[len(fq)-1] != p.Ref {
					t.Fatalf("%v refused %d, not the arrival %d", c.Kind, p.Ref, lastIn)
				}
				perFlow[0] = fq[:len(fq)-1]
				delete(queued, p.Ref)
				return
			}
			if cause == CoDelDrop && c.Kind == FIFO {
				t.Fatal("FIFO made a CoDel drop")
			}
			take(p, "dropped "+cause.String())
		})
		if err != nil {
			t.Fatal(err)
		}
		ops := data[6:]
		for i := 0; i < len(ops); i++ {
			op := ops[i]
			switch op & 3 {
			case 0, 1:
				p := Packet{Len: int(op>>2) * 40, ECT: op&1 != 0, Ref: ref}
				if i+1 < len(ops) {
					i++
					p.Flow = uint32(ops[i]) * 0x01000193
				}
				ref++
				lastIn = p.Ref
				s := p
				s.Len = min(s.Len, maxLen)
				queued[p.Ref] = shadow{p: s, idx: index(p)}
				perFlow[index(p)] = append(perFlow[index(p)], p.Ref)
				enqueued++
				q.Enqueue(now, p)
				if n, _ := q.Len(); n > c.Limit {
					t.Fatalf("%d packets queued, over the limit %d", n, c.Limit)
				}
			case 2:
				p, marked, ok := q.Dequeue(now)
				if !ok {
					if n, b := q.Len(); n != 0 || b != 0 {
						t.Fatalf("Dequeue failed with %d packets, %d bytes queued", n, b)
					}
					break
				}
				take(p, "dequeued")
				out++
				if marked && (!c.ECN || !p.ECT || c.Kind == FIFO) {
					t.Fatalf("marked %+v with ECN %v", p, c.ECN)
				}
			case 3:
				now += int64(op>>2) * 250 * int64(time.Microsecond)
			}
			if out > enqueued {
				t.Fatalf("%d packets out of %d in", out, enqueued)
			}
			var bytes int64
			for _, s := range queued {
				bytes += int64(s.p.Len)
			}
			n, b := q.Len()
			if n != len(queued) || b != bytes {
				t.Fatalf("Len %d packets %d bytes, the model has %d and %d", n, b, len(queued), bytes)
			}
			var fn int
			var fb int64
			for _, fl := range q.FlowBacklogs(nil) {
				if len(perFlow[fl.Index]) != fl.Packets {
					t.Fatalf("flow queue %d: %d packets, the model has %d", fl.Index, fl.Packets, len(perFlow[fl.Index]))
				}
				fn += fl.Packets
				fb += fl.Bytes
			}
			if fn != n || fb != b {
				t.Fatalf("FlowBacklogs add up to %d packets %d bytes, Len says %d %d", fn, fb, n, b)
			}
			st := q.Stats()
			if st.Arrivals != uint64(enqueued) || st.Dequeued != uint64(out) ||
				st.Arrivals != st.Dequeued+st.OverlimitDrops+st.CoDelDrops+uint64(n) ||
				st.OverMemoryDrops > st.OverlimitDrops || st.Marks > st.Dequeued {
				t.Fatalf("Stats %+v do not add up (%d in, %d out, %d queued)", st, enqueued, out, n)
			}
		}
	})
}
