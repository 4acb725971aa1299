package report

import (
	"slices"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/stats"
)

// TestRecoveries: echoes every 100 ms at 80 ms; a blackout of both
// directions from 10 s to 10.3 s (the echoes sent during it held until the
// link is up), two slow echoes after it, then normal ones; the rate
// stepped down from 20 s to 25 s with echoes at 200 ms until 25.5 s; and a
// blackout 1 s into the run, inside the warm-up, which does not count.
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
		case off >= 20*time.Second && off < 25500*time.Millisecond:
			rtt = 200 * time.Millisecond
		}
		samples = append(samples, stats.Sample{Offset: off, RTT: rtt})
	}
	at := func(d time.Duration) time.Time { return start.Add(d) }
	var changes []shapedlink.AppliedChange
	for _, dir := range []string{"down", "up"} {
		changes = append(changes,
			shapedlink.AppliedChange{At: at(time.Second), Dir: dir, Set: "down"},
			shapedlink.AppliedChange{At: at(1300 * time.Millisecond), Dir: dir, Set: "up"},
			shapedlink.AppliedChange{At: at(10 * time.Second), Dir: dir, Set: "down"},
			shapedlink.AppliedChange{At: at(10300 * time.Millisecond), Dir: dir, Set: "up"})
	}
	changes = append(changes,
		shapedlink.AppliedChange{At: at(20 * time.Second), Dir: "down", Set: "rate", Value: 2},
		shapedlink.AppliedChange{At: at(25 * time.Second), Dir: "down", Set: "rate", Value: 10})
	// In time order, as a link records them.
	slices.SortStableFunc(changes, func(a, b shapedlink.AppliedChange) int { return a.At.Compare(b.At) })
	r := results.Run{
		Cell:         results.Cell{Profile: "80:10"},
		Warmup:       5 * time.Second,
		Samples:      samples,
		SamplesStart: start,
		Link:         results.Link{Changes: changes},
	}
	got := recoveries(r)
	if len(got) != 2 {
		t.Fatalf("events %+v, want the blackout at 10 s (both directions, once) and the step down at 20 s", got)
	}
	// Blackout: the first echo within 10% of 80 ms is sent at 10.5 s and
	// arrives at 10.58 s, 280 ms after the link came back at 10.3 s.
	if b := got[0]; b.Set != "down" || b.AtMs != 10000 || b.EndMs != 10300 || b.Baseline != 80*time.Millisecond || b.Recovery != 280*time.Millisecond {
		t.Errorf("blackout: %+v, want recovery 280ms after 10.3 s from a baseline of 80ms", b)
	}
	// Step: back at 25 s; the first good echo is sent at 25.5 s and
	// arrives 580 ms after.
	if s := got[1]; s.Set != "rate" || s.AtMs != 20000 || s.EndMs != 25000 || s.Recovery != 580*time.Millisecond {
		t.Errorf("step down: %+v, want recovery 580ms after 25 s", s)
	}
	// Never back within the run: no recovery.
	for i := range r.Samples {
		if r.Samples[i].Offset >= 20*time.Second {
			r.Samples[i].RTT = 200 * time.Millisecond
		}
	}
	if got := recoveries(r); len(got) != 2 || got[1].Recovery != -1 {
		t.Errorf("a channel that never recovers: %+v, want -1", got)
	}
}
