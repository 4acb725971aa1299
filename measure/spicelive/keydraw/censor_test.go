package keydraw

import (
	"slices"
	"testing"
	"time"

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
