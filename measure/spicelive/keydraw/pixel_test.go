package keydraw

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// Keys typed every 500 ms: each is timed to the first change after it
// and before the next key, and paired with the first tunnel key press in
// the same interval and that press's key-to-draw.
func TestAttributePixels(t *testing.T) {
	keys := []time.Duration{ms(1000), ms(1500), ms(2000), ms(2500), ms(3000), ms(3500)}
	changes := []time.Duration{
		ms(990),            // before any key: nobody's
		ms(1040), ms(1045), // key 0's glyph, then its cursor: the first counts
		ms(1530),           // key 1; none for key 2
		ms(2600),           // after key 3: key 2's late answer, or key 3's; not timed
		ms(3025), ms(3600), // key 4; key 5
	}
	tunnel := []time.Duration{ms(3510), ms(1008), ms(1509), ms(2007), ms(2508), ms(3009)} // any order
	draws := map[time.Duration]time.Duration{ms(1008): ms(25), ms(1509): ms(15), ms(3009): ms(12)}
	got := attributePixels(keys, changes, tunnel, draws)
	want := []PixelKey{
		{At: ms(1000), Pixel: ms(40), Tunnel: ms(8), Draw: ms(25)},
		{At: ms(1500), Pixel: ms(30), Tunnel: ms(9), Draw: ms(15)},
		{At: ms(2000), Pixel: -1, Tunnel: ms(7), Draw: -1, Unanswered: true},
		{At: ms(2500), Pixel: -1, Tunnel: ms(8), Draw: -1},
		{At: ms(3000), Pixel: ms(25), Tunnel: ms(9), Draw: ms(12)},
		{At: ms(3500), Pixel: ms(100), Tunnel: ms(10), Draw: -1},
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%+v\nwant\n%+v", got, want)
	}
	// A key whose press never reached the tunnel has no tunnel time.
	got = attributePixels([]time.Duration{ms(1000), ms(1500)}, []time.Duration{ms(1030), ms(1540)}, []time.Duration{ms(1510)}, nil)
	if got[0].Tunnel != -1 || got[0].Pixel != ms(30) || got[1].Tunnel != ms(10) || got[1].Draw != -1 {
		t.Errorf("a key lost before the tunnel: %+v", got)
	}
}

// analysePixels reads the keys from the capture and the tunnel's keys and
// draws from the trace, and reports over the keys after the warm-up.
func TestAnalysePixels(t *testing.T) {
	start := ms(500)
	var tr spicetrace.Trace
	var pc PixelCapture
	for i := range 6 {
		k := start + ms(float64(i*500)) // typed
		pc.Keys = append(pc.Keys, TypedKey{Key: "a", T: k, Synced: k + ms(0.3), Released: k + ms(6)})
		tr.Records = append(tr.Records, key(k+ms(8)), draw(k+ms(8+40), glyph, true))
		// Pixels 3 ms after the draw, but the 5th key's 1 ms before it:
		// within the tolerance, unlike the 6th's 10 ms.
		px := k + ms(8+40+3)
		switch i {
		case 4:
			px = k + ms(8+40-1)
		case 5:
			px = k + ms(8+40-10)
		}
		pc.Changes = append(pc.Changes, PixelChange{T: px, Checked: px + ms(1)})
	}
	a := Analyse(&tr, typingArea, busyArea, start)
	p := analysePixels(pc, &tr, a, start, ms(1000)) // the first two keys are the warm-up
	if p.Typed != 6 || p.Unanswered != 0 || p.AfterUnanswered != 0 || p.Diff.N != 4 {
		t.Fatalf("typed %d, unanswered %d, after %d, timed %d; want 6, 0, 0, 4", p.Typed, p.Unanswered, p.AfterUnanswered, p.Diff.N)
	}
	if p.Keys[0].At != 0 || p.Keys[2].At != ms(1000) {
		t.Errorf("keys at %v and %v, want from the typing's start", p.Keys[0].At, p.Keys[2].At)
	}
	// Diffs over keys 2-5: 11, 11, 7, -2 ms; input 8 ms each.
	if p.Diff.P50 != ms(7) || p.Diff.Min != ms(-2) || p.Diff.Max != ms(11) || p.Input.P50 != ms(8) || p.Output.Min != ms(-10) {
		t.Errorf("diff %+v, input %+v, output %+v", p.Diff, p.Input, p.Output)
	}
	if p.Early != 1 {
		t.Errorf("%d keys early, want the one 10 ms before its draw", p.Early)
	}
	if p.MaxSync != ms(0.3) || p.Pixel.Min != ms(38) {
		t.Errorf("max sync %v, shortest key-to-pixel %v", p.MaxSync, p.Pixel.Min)
	}
}

func TestCheckArea(t *testing.T) {
	typing := spicetrace.Rect{Right: 484, Bottom: 316}
	s, err := checkArea(spicetrace.Rect{Top: 70, Left: 1, Bottom: 267, Right: 302}, typing)
	if err != nil || s < 0.62 || s > 0.63 {
		t.Errorf("spicy's scaled xterm: scale %v, %v", s, err)
	}
	// The busy xterm, or half the typing one, is not the typing xterm.
	for _, bad := range []spicetrace.Rect{{Top: 321, Left: 1, Bottom: 403, Right: 302}, {Top: 70, Left: 1, Bottom: 170, Right: 302}, {}} {
		if _, err := checkArea(bad, typing); err == nil {
			t.Errorf("%+v taken for the typing xterm", bad)
		}
	}
}

// Two keys typed 500 ms apart. The first one's press passed the tunnel
// 8 ms after it was typed, its draw 40 ms after that, and spicy's window
// changed twice (glyph, then cursor) after it: key-to-pixel is the first
// change. The second key's window did not change before the third key
// was typed: it is unanswered, and the third is not timed, as its change
// may be the second's late answer.
func TestAttributePixelsTimesTheFirstChange(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	typed := []time.Duration{ms(1000), ms(1500), ms(2000)}
	changes := []time.Duration{ms(1051), ms(1053), ms(2060)}
	tunnel := []time.Duration{ms(1008), ms(1509), ms(2008)}
	draws := map[time.Duration]time.Duration{ms(1008): ms(40), ms(2008): ms(45)}
	var got []string
	for _, k := range attributePixels(typed, changes, tunnel, draws) {
		got = append(got, fmt.Sprintf("key at %v: key-to-pixel %v, key-to-draw %v, unanswered %v", k.At, k.Pixel, k.Draw, k.Unanswered))
	}
	want := []string{
		"key at 1s: key-to-pixel 51ms, key-to-draw 40ms, unanswered false",
		"key at 1.5s: key-to-pixel -1ns, key-to-draw -1ns, unanswered true",
		"key at 2s: key-to-pixel -1ns, key-to-draw 45ms, unanswered false",
	}
	if !slices.Equal(got, want) {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
