package report

import (
	"testing"
	"time"

	"github.com/shakenfist/quicbench/examples/internal/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/stats"
)

// TestRecoveries: echoes every 100 ms at 80 ms; a blackout at 10 s during
// which the echoes sent take until the link is back, then two slow
// echoes, then normal ones; a rate step down at 20 s and back up at 25 s
// (only the step down is an event); a blackout 1 s into the run, inside
// the warm-up, which is not.
func TestRecoveries(t *testing.T) {
	start := time.Unix(1000, 0)
	var samples []stats.Sample
	for off := time.Duration(0); off < 30*time.Second; off += 100 * time.Millisecond {
		rtt := 80 * time.Millisecond
		switch {
		case off >= 10*time.Second && off < 10300*time.Millisecond:
			rtt = 10300*time.Millisecond - off + 80*time.Millisecond // held until up
		case off >= 10300*time.Millisecond && off < 10500*time.Millisecond:
			rtt = 150 * time.Millisecond
		case off >= 20*time.Second && off < 21*time.Second:
			rtt = 200 * time.Millisecond
		}
		samples = append(samples, stats.Sample{Offset: off, RTT: rtt})
	}
	at := func(d time.Duration) time.Time { return start.Add(d) }
	r := results.Run{
		Cell:         results.Cell{Profile: "80:10"},
		Warmup:       5 * time.Second,
		Samples:      samples,
		SamplesStart: start,
		Link: results.Link{Changes: []shapedlink.AppliedChange{
			{At: at(time.Second), Dir: "down", Set: "down"},
			{At: at(1300 * time.Millisecond), Dir: "down", Set: "up"},
			{At: at(10 * time.Second), Dir: "down", Set: "down"},
			{At: at(10300 * time.Millisecond), Dir: "down", Set: "up"},
			{At: at(20 * time.Second), Dir: "down", Set: "rate", Value: 2},
			{At: at(25 * time.Second), Dir: "down", Set: "rate", Value: 10},
		}},
	}
	got := Recoveries(r)
	if len(got) != 2 {
		t.Fatalf("events %+v, want the blackout at 10 s and the step down at 20 s", got)
	}
	// Blackout: the first echo within 10% of 80 ms is sent at 10.5 s and
	// arrives at 10.58 s; it and the next two are fine.
	if b := got[0]; b.Set != "down" || b.AtMs != 10000 || b.Baseline != 80*time.Millisecond || b.Recovery != 580*time.Millisecond {
		t.Errorf("blackout: %+v, want recovery 580ms from a baseline of 80ms", b)
	}
	if s := got[1]; s.Set != "rate" || s.AtMs != 20000 || s.Recovery != 1080*time.Millisecond {
		t.Errorf("step down: %+v, want recovery 1.08s (the echo sent at 21 s arrives at 21.08 s)", s)
	}
	// Never back within the run: no recovery.
	for i := range r.Samples {
		if r.Samples[i].Offset >= 20*time.Second {
			r.Samples[i].RTT = 200 * time.Millisecond
		}
	}
	if got := Recoveries(r); got[1].Recovery != -1 {
		t.Errorf("a channel that never recovers: %+v, want -1", got[1])
	}
}
