package keydraw

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/spicelive/xwindow"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// The typing xterm as spicy shows it in a 640-pixel-wide window: the
// guest's screen at 0.625 from 69 pixels down, and the white area found
// there (as in TestFindArea).
var (
	shownArea  = spicetrace.Rect{Top: 70, Left: 1, Bottom: 267, Right: 302}
	shownScale = 0.625
	shownTop   = 69.0
)

// shown is the rectangle of spicy's window that shows the cells in
// columns from to to (inclusive) of a row of typingArea, its pixels
// wholly or partly in them.
func shown(row, from, to int) spicetrace.Rect {
	g := glyphs(row, from, to)
	return spicetrace.Rect{
		Top: int32(math.Floor(shownTop + float64(g.Top)*shownScale)), Bottom: int32(math.Ceil(shownTop + float64(g.Bottom)*shownScale)),
		Left: int32(math.Floor(float64(g.Left) * shownScale)), Right: int32(math.Ceil(float64(g.Right) * shownScale)),
	}
}

// typedKey is a key typed at t whose press reached the tunnel 8 ms later.
func typedKey(name string, t time.Duration) (TypedKey, spicetrace.Record) {
	r := key(t + ms(8))
	r.Key.Code = keyScancodes[name]
	return TypedKey{Key: name, T: t, Synced: t + ms(0.2), Released: t + ms(6)}, r
}

// The middle of every cell the glyph analysis times lands, in spicy's
// window, on a pixel inside that cell as spicy shows it.
func TestGuestToWindowHitsEachCell(t *testing.T) {
	toWindow := xwindow.GuestToWindow(typingArea, shownArea)
	var gks []glyphKey
	var tr spicetrace.Trace
	var keys []int
	for i := range typingCols * (typingRows - 1) {
		tr.Records = append(tr.Records, key(ms(float64(i))))
		keys = append(keys, i)
	}
	gks = glyphKeys(&tr, keys, typingArea, time.Hour, time.Second)
	for i, g := range gks {
		row, col := i/typingCols, i%typingCols
		x, y := toWindow(g.x, g.y)
		// The pixel's middle must be in the cell's scaled span.
		c := glyphs(row, col, col)
		fx, fy := (float64(x)+0.5)/shownScale, (float64(y)+0.5-shownTop)/shownScale
		if fx < float64(c.Left) || fx >= float64(c.Right) || fy < float64(c.Top) || fy >= float64(c.Bottom) {
			t.Fatalf("cell %d,%d (%+v on the guest): its middle %d,%d maps to %d,%d in the window, which shows %.1f,%.1f", row, col, c, g.x, g.y, x, y, fx, fy)
		}
	}
}

func TestChangedRects(t *testing.T) {
	area := spicetrace.Rect{Top: 70, Left: 1, Bottom: 90, Right: 41} // 40x20
	a := make([]byte, 4*40*20)
	b := slices.Clone(a)
	if r := changedRects(a, b, area); len(r) != 0 {
		t.Errorf("no change: %+v", r)
	}
	set := func(x0, y0, x1, y1 int) {
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				b[4*(y*40+x)+y%3] = 0xff
			}
		}
	}
	// Two glyphs on a line, a column apart; two more at the start of the
	// next line, its rows touching the first's; one further down.
	set(30, 2, 33, 9)
	set(34, 3, 37, 8)
	set(0, 9, 3, 16)
	set(4, 10, 7, 16)
	set(10, 19, 11, 20)
	want := []spicetrace.Rect{
		{Top: 79, Left: 1, Bottom: 86, Right: 8},
		{Top: 72, Left: 31, Bottom: 79, Right: 38},
		{Top: 89, Left: 11, Bottom: 90, Right: 12},
	}
	if r := changedRects(a, b, area); !slices.Equal(r, want) {
		t.Errorf("changed %+v, want %+v", r, want)
	}
	// A change without its rectangles is written as before.
	j, _ := json.Marshal(PixelChange{T: ms(1)})
	if strings.Contains(string(j), "changed") {
		t.Errorf("a change without its rectangles: %s", j)
	}
}

// glyphCapture is a run with a display workload: keys typed 500 ms apart
// and drawn seconds late, some after the next key, with the pixel
// changes spicy's window showed.
func glyphCapture() (PixelCapture, *spicetrace.Trace) {
	pc := PixelCapture{Area: shownArea}
	tr := &spicetrace.Trace{}
	typeKey := func(name string, at float64, sent bool) {
		k, r := typedKey(name, ms(at))
		pc.Keys = append(pc.Keys, k)
		if sent {
			tr.Records = append(tr.Records, r)
		}
	}
	change := func(at float64, rs ...spicetrace.Rect) {
		pc.Changes = append(pc.Changes, PixelChange{T: ms(at), Checked: ms(at + 0.5), Damaged: shownArea, Changed: rs})
	}
	typeKey("a", 1000, true)
	typeKey("b", 1500, true)
	typeKey("c", 2000, true)
	typeKey("Return", 2500, true)
	typeKey("d", 3000, true)    // never drawn
	typeKey("e", 3500, false)   // never reached the tunnel
	typeKey("f", 6995, true)    // its press in the last timeout
	change(900, shown(0, 0, 0)) // before any key
	change(1600, shown(5, 40, 44))
	tr.Records = append(tr.Records, draw(ms(2100), glyphs(0, 0, 0), true))
	change(2110, shown(3, 10, 12), shown(0, 0, 0))
	tr.Records = append(tr.Records, draw(ms(2200), glyphs(0, 1, 2), true))
	change(2215, shown(0, 1, 2))
	change(3100, shown(10, 0, 3))
	tr.Records = append(tr.Records, draw(ms(7100), glyphs(1, 1, 1), true))
	change(7110, shown(1, 1, 1))
	slices.SortStableFunc(tr.Records, func(x, y spicetrace.Record) int { return int(x.T - y.T) })
	return pc, tr
}

// Each key is timed to the first change over its own glyph's cell,
// however late and whatever keys came between, and beside it to the draw
// of that glyph at the tunnel: key 1 was drawn after keys 2 and 3 were
// typed, by a change in two places; one change answers keys 2 and 3
// together; a change elsewhere in
// the typing area answers nobody; a key never drawn, or never sent, is
// unanswered; Return and the key pressed at the tunnel in the last
// timeout are not timed, as AnalyseGlyphs decides.
func TestAnalysePixelGlyphs(t *testing.T) {
	pc, tr := glyphCapture()
	p := analysePixelGlyphs(pc, tr, typingArea, ms(500), 10*time.Second, 0, 3*time.Second, 0)
	want := []PixelKey{
		{At: ms(500), Pixel: ms(1110), Tunnel: ms(8), Draw: ms(1092)},
		{At: ms(1000), Pixel: ms(715), Tunnel: ms(8), Draw: ms(692)},
		{At: ms(1500), Pixel: ms(215), Tunnel: ms(8), Draw: ms(192)},
		{At: ms(2000), Pixel: -1, Tunnel: ms(8), Draw: -1},
		{At: ms(2500), Pixel: -1, Tunnel: ms(8), Draw: -1, Unanswered: true},
		{At: ms(3000), Pixel: -1, Tunnel: -1, Draw: -1, Unanswered: true},
		{At: ms(6495), Pixel: -1, Tunnel: ms(8), Draw: -1},
	}
	if !slices.Equal(p.Keys, want) {
		t.Errorf("got\n%+v\nwant\n%+v", p.Keys, want)
	}
	if p.Method != MethodGlyph || p.Typed != 7 || p.Unanswered != 2 || p.AfterUnanswered != 0 || p.Untimed != 1 || p.Tail != 1 {
		t.Errorf("method %q, typed %d, unanswered %d, after %d, untimed %d, tail %d; want glyph, 7, 2, 0, 1, 1",
			p.Method, p.Typed, p.Unanswered, p.AfterUnanswered, p.Untimed, p.Tail)
	}
	if p.Diff.N != 3 || p.Diff.Min != ms(18) || p.Diff.Max != ms(23) || p.Output.P50 != ms(15) || p.Early != 0 || p.MaxSync != ms(0.2) {
		t.Errorf("diff %+v, output %+v, early %d, max sync %v", p.Diff, p.Output, p.Early, p.MaxSync)
	}
	// The warm-up leaves the first key out of the figures, not the keys.
	if p := analysePixelGlyphs(pc, tr, typingArea, ms(500), 10*time.Second, 0, 3*time.Second, ms(800)); p.Diff.N != 2 || len(p.Keys) != 7 {
		t.Errorf("after an 800 ms warm-up: %d timed of %d keys, want 2 of 7", p.Diff.N, len(p.Keys))
	}
}

// A live run with a workload is read by glyph when its capture has the
// changed rectangles, and the old way when it was made without them;
// without a workload always the old way.
func TestAnalyseCaptureChoosesByWorkloadAndCapture(t *testing.T) {
	pc, tr := glyphCapture()
	old := pc
	old.Changes = slices.Clone(pc.Changes)
	for i := range old.Changes {
		old.Changes[i].Changed = nil
	}
	const timeout, warmup = 3 * time.Second, 5 * time.Second
	for _, tc := range []struct {
		name    string
		byGlyph bool
		pc      PixelCapture
		method  string
	}{
		{"workload", true, pc, MethodGlyph},
		{"workload, old capture", true, old, ""},
		{"no workload", false, pc, ""},
	} {
		a := Analyse(tr, typingArea, busyArea, ms(500))
		if tc.byGlyph {
			a = AnalyseGlyphs(tr, typingArea, busyArea, ms(500), 10*time.Second, 0, timeout)
		}
		p, err := AnalyseCapture(tc.pc, tr, a, typingArea, tc.byGlyph, ms(500), 10*time.Second, 0, timeout, warmup)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if p.Method != tc.method || p.Typed != 7 || p.Scale < 0.62 || p.Scale > 0.63 {
			t.Errorf("%s: method %q, %d keys, scale %v; want %q", tc.name, p.Method, p.Typed, p.Scale, tc.method)
		}
	}
}
