package xsession

import (
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// The xterms' rectangles on Xspice's screen, as the server role finds them.
var (
	typingArea = spicetrace.Rect{Top: 0, Left: 0, Bottom: 316, Right: 484}
	busyArea   = spicetrace.Rect{Top: 400, Left: 0, Bottom: 534, Right: 484}
)

func TestPipelines(t *testing.T) {
	v, err := DisplaySpec{Workload: DisplayVideo, Width: 520, Height: 560, FrameRate: 25}.pipeline()
	if err != nil {
		t.Fatal(err)
	}
	vs := strings.Join(v, " ")
	for _, want := range []string{"videotestsrc is-live=true pattern=zone-plate", "video/x-raw,width=520,height=560,framerate=25/1", "! ximagesink"} {
		if !strings.Contains(vs, want) {
			t.Errorf("the video pipeline %q lacks %q", vs, want)
		}
	}
	im, err := DisplaySpec{Workload: DisplayImages, Width: 260, Height: 200, ImageInterval: 400 * time.Millisecond}.pipeline()
	if err != nil {
		t.Fatal(err)
	}
	is := strings.Join(im, " ")
	for _, want := range []string{"fdsrc fd=3 ! rawvideoparse width=260 height=200 format=bgrx framerate=1000/400", "! ximagesink"} {
		if !strings.Contains(is, want) {
			t.Errorf("the images pipeline %q lacks %q", is, want)
		}
	}
	if _, err := (DisplaySpec{Workload: "movie", Width: 10, Height: 10}).pipeline(); err == nil {
		t.Error("an unknown workload has a pipeline")
	}
}

func TestPlaceDisplayRightOfTheXterms(t *testing.T) {
	x, y, err := placeDisplay(520, 560, typingArea, busyArea)
	if err != nil || x != 492 || y != 0 {
		t.Errorf("placed at %d,%d (%v), want 492,0", x, y, err)
	}
	r := spicetrace.Rect{Left: int32(x), Top: int32(y), Right: int32(x + 520), Bottom: int32(y + 560)}
	if r.Intersects(typingArea) || r.Intersects(busyArea) || r.Right > Screen.Right {
		t.Errorf("%+v overlaps an xterm or leaves the screen", r)
	}
	if _, _, err := placeDisplay(540, 100, typingArea, busyArea); err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("a window too wide: %v", err)
	}
}
