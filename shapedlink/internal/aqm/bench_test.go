package aqm

import (
	"testing"
	"time"
)

// TestNoAllocs: after New, Enqueue and Dequeue allocate nothing, on the
// plain path and on the drop paths (drop-tail, fq_codel's fat-flow drop,
// CoDel drops and marks).
func TestNoAllocs(t *testing.T) {
	for _, k := range []Kind{FIFO, CoDel, FQCoDel} {
		drops := 0
		q := mustNew(t, Config{Kind: k, Limit: 1000, ECN: true}, func(Packet, Cause) { drops++ })
		now := int64(0)
		i := 0
		allocs := testing.AllocsPerRun(3000, func() {
			// Three in, two out every 100 us: the queue fills, CoDel
			// sees a growing delay, and the limit is reached.
			for range 3 {
				q.Enqueue(now, Packet{Len: 1500, Flow: uint32(i % 7), ECT: i%2 == 0, Ref: int64(i)})
				i++
			}
			q.Dequeue(now)
			q.Dequeue(now)
			now += 100 * int64(time.Microsecond)
		})
		if allocs != 0 {
			t.Errorf("%v: %v allocations per run", k, allocs)
		}
		st := q.Stats()
		if st.OverlimitDrops == 0 || (k != FIFO && st.CoDelDrops+st.Marks == 0) {
			t.Errorf("%v: test setup: drop paths not reached: %+v", k, st)
		}
	}
}

// BenchmarkEnqueueDequeue is one Enqueue and one Dequeue on a queue
// holding 64 packets of 16 flows, with a delay well under target (no
// drops): the per-packet cost on the forwarding path.
func BenchmarkEnqueueDequeue(b *testing.B) {
	for _, k := range []Kind{FIFO, CoDel, FQCoDel} {
		b.Run(k.String(), func(b *testing.B) {
			q := mustNew(b, Config{Kind: k}, nil)
			i := 0
			for ; i < 64; i++ {
				q.Enqueue(0, Packet{Len: 1500, Flow: uint32(i) & 15, Ref: int64(i)})
			}
			now := int64(0)
			b.ReportAllocs()
			for b.Loop() {
				now += 1000
				q.Enqueue(now, Packet{Len: 1500, Flow: uint32(i) & 15, Ref: int64(i)})
				i++
				if _, _, ok := q.Dequeue(now); !ok {
					b.Fatal("empty")
				}
			}
		})
	}
}

// BenchmarkFQCoDelOverload is fq_codel at its limit with CoDel dropping:
// two arrivals per departure over 16 flows, 1024-packet limit.
func BenchmarkFQCoDelOverload(b *testing.B) {
	q := mustNew(b, Config{Kind: FQCoDel, Limit: 1024}, nil)
	now, i := int64(0), 0
	b.ReportAllocs()
	for b.Loop() {
		now += 10_000
		q.Enqueue(now, Packet{Len: 1500, Flow: uint32(i) & 15})
		q.Enqueue(now, Packet{Len: 1500, Flow: uint32(i+7) & 15})
		i++
		q.Dequeue(now)
	}
}

func BenchmarkClassify(b *testing.B) {
	f := ether(etherIPv4, v4{ttl: 64, proto: protoUDP, src: "10.0.0.1", dst: "10.0.0.2"}.build(udp(4433, 50000)))
	b.ReportAllocs()
	for b.Loop() {
		Classify(f, 1)
	}
}
