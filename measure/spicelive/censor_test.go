package spicelive

import (
	"slices"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
	"github.com/shakenfist/quicbench/stats"
)

// With a wait for answers after the typing, a key typed in the typing's
// last timeout is timed; a key never answered counts at the timeout; and
// only an unanswered key pressed too near the wait's end to have had the
// whole timeout is left in Tail.
func TestAnalyseGlyphsTimesToTheEndAndCensors(t *testing.T) {
	tr := &spicetrace.Trace{Records: []spicetrace.Record{
		key(ms(0)), draw(ms(100), glyphs(0, 0, 0), true),
		key(ms(1000)),                                        // never answered
		key(ms(9000)), draw(ms(9400), glyphs(0, 2, 2), true), // in the typing's last timeout
		key(ms(9500)), // unanswered, and the wait ended before its timeout did
	}}
	a := AnalyseGlyphs(tr, typingArea, busyArea, 0, 10*time.Second, 11*time.Second, 3*time.Second)
	if want := []stats.Sample{{Offset: 0, RTT: ms(100)}, {Offset: ms(9000), RTT: ms(400)}}; !slices.Equal(a.Samples, want) {
		t.Errorf("timed %v, want %v", a.Samples, want)
	}
	if want := []stats.Sample{{Offset: ms(1000), RTT: 3 * time.Second}}; !slices.Equal(a.Censored, want) {
		t.Errorf("censored %v, want %v", a.Censored, want)
	}
	if a.Unanswered != 1 || a.Tail != 1 {
		t.Errorf("unanswered %d, tail %d; want 1 and 1", a.Unanswered, a.Tail)
	}
	// A run that stopped with its typing keeps the old rule: the keys in
	// its last timeout are not timed at all.
	old := AnalyseGlyphs(tr, typingArea, busyArea, 0, 10*time.Second, 0, 3*time.Second)
	if len(old.Samples) != 1 || old.Tail != 2 || len(old.Censored) != 1 {
		t.Errorf("without the wait: %d timed, tail %d, censored %d; want 1, 2, 1", len(old.Samples), old.Tail, len(old.Censored))
	}
}

// A live run's samples hold its censored keys at the timeout, in the
// order typed, so that its percentiles count them.
func TestFillRunCountsCensoredKeys(t *testing.T) {
	c := displayConfig(DisplayVideo)
	rec := &LiveRecord{Client: &ClientResult{TypingEnd: 10 * time.Second}, Analysis: Analysis{
		Samples:    []stats.Sample{{Offset: 0, RTT: ms(100)}, {Offset: ms(2000), RTT: ms(200)}},
		Censored:   []stats.Sample{{Offset: ms(1000), RTT: c.KeyTimeout}},
		Unanswered: 1,
	}}
	var run results.Run
	fillRun(&run, c, rec, &spicetrace.Trace{})
	if want := []stats.Sample{{Offset: 0, RTT: ms(100)}, {Offset: ms(1000), RTT: c.KeyTimeout}, {Offset: ms(2000), RTT: ms(200)}}; !slices.Equal(run.Samples, want) {
		t.Errorf("run samples %v, want %v", run.Samples, want)
	}
	if run.Timeouts != 1 {
		t.Errorf("timeouts %d, want 1", run.Timeouts)
	}
	s, err := stats.SummariseRepeat(run.StatsRepeat(), 0)
	if err != nil || s.P99 != c.KeyTimeout {
		t.Errorf("p99 %v (%v), want the timeout %v", s.P99, err, c.KeyTimeout)
	}
}
