package aqm

import (
	"testing"
	"time"
)

// TestCoDelECN: with ECN on, CoDel marks ECN-capable packets where it
// would have dropped them, on the same control-law schedule, and drops
// none; packets that are not ECN-capable are still dropped; with ECN off
// nothing is marked.
func TestCoDelECN(t *testing.T) {
	overload := func(ecn, ect bool) *sim {
		c := codelConfig()
		c.ECN = ecn
		s := newSim(t, c)
		s.pkt.ECT = ect
		s.burst(10000)
		s.run(480*time.Millisecond, 1, 1)
		return s
	}

	s := overload(true, true)
	if len(s.drops) != 0 {
		t.Fatalf("ECN on, ECT packets: %d drops, want none", len(s.drops))
	}
	if len(s.marks) == 0 || s.marks[0] != 105*ms {
		t.Fatalf("ECN on, ECT packets: marks at %v, want the first at 105 ms", s.marks)
	}
	controlLawTimes(t, s.marks, 1, 6)
	if st := s.q.Stats(); st.Marks != uint64(len(s.marks)) || st.CoDelDrops != 0 {
		t.Fatalf("Stats: %d marks %d drops, want %d and 0", st.Marks, st.CoDelDrops, len(s.marks))
	}

	for _, c := range []struct {
		name     string
		ecn, ect bool
	}{
		{"ECN on, not-ECT packets", true, false},
		{"ECN off, ECT packets", false, true},
		{"ECN off, not-ECT packets", false, false},
	} {
		s := overload(c.ecn, c.ect)
		if len(s.marks) != 0 || s.q.Stats().Marks != 0 {
			t.Fatalf("%s: %d marks, want none", c.name, len(s.marks))
		}
		controlLawTimes(t, s.drops, 1, 6)
	}
}

// TestFQCoDelECN: in one fq_codel queue with ECN on, a bulk ECN-capable
// flow is marked and never dropped while a bulk flow that is not is
// dropped and never marked.
func TestFQCoDelECN(t *testing.T) {
	drops := map[uint32]int{}
	q := mustNew(t, Config{Kind: FQCoDel, Limit: MaxLimit, ECN: true}, func(p Packet, c Cause) {
		if c != CoDelDrop {
			t.Fatalf("%v drop", c)
		}
		drops[p.Flow]++
	})
	ect := map[uint32]bool{1: true, 2: false}
	for range 5000 {
		for f, e := range ect {
			q.Enqueue(0, Packet{Len: 1000, Flow: f, ECT: e})
		}
	}
	marks := map[uint32]int{}
	for now := int64(0); now < int64(time.Second); now += us {
		if now%(2*us) == 0 {
			for f, e := range ect {
				q.Enqueue(now, Packet{Len: 1000, Flow: f, ECT: e})
			}
		}
		if p, marked, ok := q.Dequeue(now); ok && marked {
			if !p.ECT {
				t.Fatalf("marked a packet that is not ECN-capable")
			}
			marks[p.Flow]++
		}
	}
	if marks[1] < 5 || drops[1] != 0 {
		t.Fatalf("ECT flow: %d marks, %d drops; want marks and no drops", marks[1], drops[1])
	}
	if drops[2] < 5 || marks[2] != 0 {
		t.Fatalf("not-ECT flow: %d drops, %d marks; want drops and no marks", drops[2], marks[2])
	}
	if st := q.Stats(); st.Marks != uint64(marks[1]) || st.CoDelDrops != uint64(drops[2]) {
		t.Fatalf("Stats %+v", st)
	}
}
