package keydraw

import (
	"slices"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// glyphs is the box of the glyphs in columns from to to (inclusive) of a
// row of typingArea (6x13 cells, 3 pixels in).
func glyphs(row, from, to int) spicetrace.Rect {
	return spicetrace.Rect{Top: int32(3 + 13*row), Bottom: int32(16 + 13*row), Left: int32(3 + 6*from), Right: int32(3 + 6*(to+1))}
}

func returnKey(t time.Duration) spicetrace.Record {
	r := key(t)
	r.Key.Code = scancodeReturn
	return r
}

// Each key is timed to the draw of its own glyph, however late and
// whatever keys came between; a draw of several glyphs answers each.
func TestAnalyseGlyphsTimesEachKeyToItsGlyph(t *testing.T) {
	tr := &spicetrace.Trace{Records: []spicetrace.Record{
		key(ms(0)), key(ms(500)),
		draw(ms(600), busyLine, true),
		key(ms(1000)),
		draw(ms(1100), glyphs(0, 5, 5), true), // a glyph not typed yet answers nothing
		draw(ms(1200), glyphs(0, 0, 1), true), // the first two keys, the second one 700 ms late
		draw(ms(1300), glyphs(0, 2, 2), true),
		key(ms(1500)), // never drawn within the timeout
		returnKey(ms(2000)),
		key(ms(2500)),
		draw(ms(2510), busyLine, true),
		draw(ms(2600), glyphs(1, 0, 0), true),
		draw(ms(5000), glyphs(0, 3, 3), true), // 3.5 s after its key: too late
		key(ms(6000)), key(ms(6200)),
		draw(ms(6300), glyphs(1, 1, 2), true), // answers two keys, the second before the next key
		key(ms(9000)),                         // in the last timeout of the typing
		draw(ms(9100), glyphs(1, 3, 3), true),
	}}
	a := AnalyseGlyphs(tr, typingArea, busyArea, 0, 10*time.Second, 0, 3*time.Second)
	var got []time.Duration
	for _, s := range a.Samples {
		got = append(got, s.RTT)
	}
	if want := []time.Duration{ms(1200), ms(700), ms(300), ms(100), ms(300), ms(100)}; !slices.Equal(got, want) {
		t.Errorf("key-to-glyph %v, want %v", got, want)
	}
	if a.Method != MethodGlyph || a.Keys != 9 || a.Unanswered != 1 || a.Untimed != 1 || a.Tail != 1 || a.AllDrawsMin != ms(10) {
		t.Errorf("method %q, keys %d, unanswered %d, untimed %d, tail %d, shortest to any draw %v; want glyph, 9, 1, 1, 1, 10ms",
			a.Method, a.Keys, a.Unanswered, a.Untimed, a.Tail, a.AllDrawsMin)
	}
	if !slices.Equal(a.UnansweredAt, []time.Duration{ms(1500)}) {
		t.Errorf("unanswered at %v, want [1.5s]", a.UnansweredAt)
	}
	// Only keys answered alone and before the next key are tagged for a
	// replay, which pairs each echo with the key before it.
	a.Tag(tr)
	var tagged []string
	for _, r := range tr.Records {
		if r.Tag != "" {
			tagged = append(tagged, r.T.String()+" "+r.Tag)
		}
	}
	if want := []string{"1s " + spicelike.TagKey, "1.3s " + spicelike.TagEcho, "2.5s " + spicelike.TagKey, "2.6s " + spicelike.TagEcho}; !slices.Equal(tagged, want) {
		t.Errorf("tagged %v, want %v", tagged, want)
	}
}
