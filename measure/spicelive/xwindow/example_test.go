package xwindow_test

import (
	"fmt"

	"github.com/shakenfist/quicbench/measure/spicelive/xwindow"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// spicy shows the guest's screen at half size, 10 pixels down: the
// typing xterm (484x316 at the guest's top left) is the white area found
// in the window, and a pixel of the guest's screen maps into it.
func ExampleFindArea() {
	const w, h = 300, 200
	white := func(x, y int) bool { return x < 242 && y >= 10 && y < 168 }
	area, err := xwindow.FindArea(w, h, white)
	if err != nil {
		fmt.Println(err)
		return
	}
	toWindow := xwindow.GuestToWindow(spicetrace.Rect{Right: 484, Bottom: 316}, area)
	x, y := toWindow(101, 41)
	fmt.Printf("area %+v; guest pixel 101,41 at %d,%d\n", area, x, y)
	// Output:
	// area {Top:10 Left:0 Bottom:168 Right:242}; guest pixel 101,41 at 49,29
}
