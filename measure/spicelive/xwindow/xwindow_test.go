package xwindow

import (
	"testing"

	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// An image of spicy's window: grey bars with a few white pixels, the
// guest's screen below in black, with the typing xterm white at its top
// left and the busy one white below it.
func TestFindArea(t *testing.T) {
	const w, h = 640, 571
	px := make([]byte, w*h) // 0 black, 1 grey, 2 white
	fill := func(x0, y0, x1, y1 int, v byte) {
		for y := y0; y < y1; y++ {
			for x := x0; x < x1; x++ {
				px[y*w+x] = v
			}
		}
	}
	fill(0, 0, w, 69, 1)
	fill(70, 35, 90, 55, 2) // a toolbar icon's white page
	fill(0, 549, w, h, 1)
	fill(1, 70, 302, 267, 2)  // typing
	fill(1, 70, 6, 80, 0)     // its cursor, at its top left
	fill(1, 321, 302, 403, 2) // busy
	white := func(x, y int) bool { return px[y*w+x] == 2 }
	got, err := FindArea(w, h, white)
	if want := (spicetrace.Rect{Top: 70, Left: 1, Bottom: 267, Right: 302}); err != nil || got != want {
		t.Errorf("found %+v (%v), want %+v", got, err, want)
	}
	if _, err := FindArea(w, h, func(x, y int) bool { return false }); err != errNoArea {
		t.Errorf("no white: %v", err)
	}
}
