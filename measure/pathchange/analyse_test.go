package pathchange

import (
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/spicelike"
)

const msec = time.Millisecond

// steady makes round trips of rtt every rtt+gap from `from` until `to`.
func steady(from, to, rtt, gap time.Duration) []spicelike.Sample {
	var s []spicelike.Sample
	for t := from; t < to; t += rtt + gap {
		s = append(s, spicelike.Sample{Offset: t, RTT: rtt})
	}
	return s
}

func TestStallClosed(t *testing.T) {
	// 80 ms round trips with a 20 ms gap, then one request sent at 10.0 s
	// that takes 700 ms, then steady again.
	s := steady(0, 10*time.Second, 80*msec, 20*msec)
	s = append(s, spicelike.Sample{Offset: 10 * time.Second, RTT: 700 * msec})
	s = append(s, steady(10*time.Second+720*msec, 20*time.Second, 90*msec, 20*msec)...)
	st := stallOf(s, 10*time.Second+50*msec, 10*time.Second+60*msec, 20*time.Second)
	if st.Open {
		t.Fatal("stall reported open although round trips resumed")
	}
	// The last completion before was at 9.9+0.08 = 9.98 s; the slow echo
	// completed at 10.7 s.
	if want := 720 * msec; st.Gap != want {
		t.Errorf("gap %v, want %v", st.Gap, want)
	}
	if st.RTT != 700*msec {
		t.Errorf("stall-ending RTT %v, want 700ms", st.RTT)
	}
	if st.RecoveryP50 != 90*msec || st.RecoveryN == 0 {
		t.Errorf("recovery p50 %v over %d, want 90ms", st.RecoveryP50, st.RecoveryN)
	}
	if st.BaselineGap != 100*msec || st.BaselineP50 != 80*msec {
		t.Errorf("baseline gap %v p50 %v, want 100ms and 80ms", st.BaselineGap, st.BaselineP50)
	}
}

func TestStallOpen(t *testing.T) {
	s := steady(0, 10*time.Second, 80*msec, 20*msec)
	// One echo completes after the change begins but before the old
	// address goes: the stall is still open.
	s = append(s, spicelike.Sample{Offset: 9990 * msec, RTT: 40 * msec})
	st := stallOf(s, 10*time.Second, 10*time.Second+100*msec, 20*time.Second)
	if !st.Open {
		t.Fatal("stall not reported open although nothing completed after the change")
	}
	last := s[len(s)-1].Offset + s[len(s)-1].RTT
	if st.Gap != 20*time.Second-last || st.RTT != 0 {
		t.Errorf("open gap %v (RTT %v), want %v from the last completion to the end", st.Gap, st.RTT, 20*time.Second-last)
	}
}

// TestStallOpenSlowReader: the last echo arrived before the old address
// went but was read 3 ms after it (a busy client). Its read time proves
// nothing about the session after the address went, so the stall is open.
func TestStallOpenSlowReader(t *testing.T) {
	s := steady(0, 10*time.Second, 80*msec, 20*msec)
	s = append(s, spicelike.Sample{Offset: 9990 * msec, RTT: 18 * msec})
	change, gone := 10*time.Second, 10*time.Second+5*msec
	st := stallOf(s, change, gone, 20*time.Second)
	if !st.Open {
		t.Fatalf("stall %+v closed by an echo sent before the old address went and read after it", st)
	}
	if want := 20*time.Second - 10008*msec; st.Gap != want || st.From != 8*msec {
		t.Errorf("open gap %v from %v, want %v from the late read (8ms)", st.Gap, st.From, want)
	}
	// A round trip sent after the address went that completes does close
	// it.
	s = append(s, spicelike.Sample{Offset: 10050 * msec, RTT: 30 * msec})
	if st := stallOf(s, change, gone, 20*time.Second); st.Open || st.To != 80*msec {
		t.Errorf("stall %+v: want closed at 80ms by the round trip sent after the address went", st)
	}
}

func TestAnalyse(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	up := start.Add(-80 * msec)
	change := start.Add(10 * time.Second)
	c := Change{At: 10*time.Second + 80*msec, Order: OrderMakeFirst, OldAddr: "198.18.0.2", NewAddr: "198.18.0.3"}
	samples := steady(0, 20*time.Second, 80*msec, 20*msec)
	cres := roleResult{SessionUp: up,
		Client: &spicelike.ClientResult{Start: start, End: start.Add(20 * time.Second), Samples: samples},
		Events: []Event{{At: change, Side: "client", What: changeBegins + " (make-first): ..."}}}
	sres := roleResult{Server: &spicelike.ServerResult{}, Events: []Event{
		{At: start, Side: "server", What: "peer address 198.18.0.2:4000"},
		{At: change.Add(150 * msec), Side: "server", What: "peer address 198.18.0.3:5000"},
	}}
	r := analyse(results.Cell{LossPct: 1}, "quic", 1, c, cres, sres, nil)
	if !r.Survived || r.ChangeAt != 10*time.Second {
		t.Errorf("survived %v (%s) at %v, want true at 10s", r.Survived, r.Why, r.ChangeAt)
	}
	if r.ServerMoved == nil || *r.ServerMoved != 150*msec {
		t.Errorf("server moved %v, want 150ms after the change", r.ServerMoved)
	}
	if len(r.Events) != 3 || r.Events[0].Offset != -10*time.Second {
		t.Errorf("events %+v: want 3 in time order with offsets from the change", r.Events)
	}

	// The same run with a timeout and a failed channel did not survive.
	cres.Client.Timeouts, cres.Client.TimeoutOffsets, cres.Client.Timeout = 1, []time.Duration{10 * time.Second}, time.Second
	cres.Client.Errors = []spicelike.ChannelError{{Channel: "main", Phase: "end", Err: "no answer"}}
	r = analyse(results.Cell{}, "tcp", 1, c, cres, sres, nil)
	if r.Survived || len(r.ClientErrors) != 1 || r.TimeoutOffsets[0] != 0 {
		t.Errorf("survived %v errors %v timeouts %v: want a failure with the timeout at the change", r.Survived, r.ClientErrors, r.TimeoutOffsets)
	}
	if r.ClientNoticed == nil || *r.ClientNoticed != time.Second || r.ServerNoticed != nil {
		t.Errorf("client noticed %v, server noticed %v: want 1s (the timeout firing) and never", r.ClientNoticed, r.ServerNoticed)
	}
}
