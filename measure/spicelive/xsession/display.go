package xsession

import (
	"fmt"
	"time"

	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// The display workloads: what runs on Xspice's screen beside the typed-into
// xterm to fill the display channel (spicelive.Config.Display).
const (
	// DisplayNone runs no workload: the two xterms alone.
	DisplayNone = ""
	// DisplayVideo redraws a window at DisplaySpec.FrameRate frames a second,
	// smooth moving content that spice-server's stream detection sends as
	// a video stream.
	DisplayVideo = "video"
	// DisplayImages draws a new noise image in a window every
	// DisplaySpec.ImageInterval, too seldom to be taken for video, compressing
	// badly.
	DisplayImages = "images"
)

// Screen is Xspice's screen size (xspiceConf's mode).
var Screen = spicetrace.Rect{Right: 1024, Bottom: 768}

// DisplayGap is the gap between the xterms and the workload's window.
const DisplayGap = 8

// DisplaySpec is a display workload as the server role starts it.
type DisplaySpec struct {
	Workload      string        `json:"workload"`
	Width         int           `json:"width"`
	Height        int           `json:"height"`
	FrameRate     int           `json:"frame_rate,omitempty"`
	ImageInterval time.Duration `json:"image_interval_ns,omitempty"`
}

// displayTitle is the workload window's name (gst-launch's ximagesink
// names its window after the Program).
const displayTitle = "gst-launch-1.0"

// pipeline is the gst-launch-1.0 pipeline that draws the workload: a live
// test source at the workload's size and rate into an X window.
//
// Video is the zone plate moving in time: smooth rings that change every
// frame, which spice-server's stream detection counts as natural content
// and sends as a video stream (MJPEG), and which compresses badly as one.
// Images are colour noise, a fresh image each time read from descriptor
// 3 (the caller gives it /dev/urandom), at a rate too low for stream
// detection, which no image codec can shrink.
func (d DisplaySpec) pipeline() ([]string, error) {
	var src []string
	var rate string
	switch d.Workload {
	case DisplayVideo:
		src = []string{"videotestsrc", "is-live=true", "pattern=zone-plate", "kx2=20", "ky2=20", "kt=1", "kt2=3"}
		rate = fmt.Sprintf("%d/1", d.FrameRate)
	case DisplayImages:
		ms := d.ImageInterval.Milliseconds()
		if ms <= 0 {
			return nil, fmt.Errorf("images workload with an interval of %v", d.ImageInterval)
		}
		// Raw frames read from descriptor 3 (random bytes): rawvideoparse
		// stamps them at the rate, and the sink shows each in its turn.
		rate = fmt.Sprintf("1000/%d", ms)
		src = []string{"fdsrc", "fd=3", "!", "rawvideoparse", fmt.Sprintf("width=%d", d.Width), fmt.Sprintf("height=%d", d.Height),
			"format=bgrx", "framerate=" + rate}
	default:
		return nil, fmt.Errorf("no display workload %q: want video or images", d.Workload)
	}
	if d.Width <= 0 || d.Height <= 0 {
		return nil, fmt.Errorf("display workload of %dx%d pixels", d.Width, d.Height)
	}
	args := append([]string{"-q"}, src...)
	args = append(args, "!", fmt.Sprintf("video/x-raw,width=%d,height=%d,framerate=%s", d.Width, d.Height, rate),
		"!", "videoconvert", "!", "ximagesink", "sync=true", "force-aspect-ratio=false")
	return args, nil
}

// placeDisplay is where the workload's window goes: right of the xterms,
// at the top of the screen, or an error when it would not fit there.
func placeDisplay(width, height int, xterms ...spicetrace.Rect) (x, y int, err error) {
	for _, r := range xterms {
		x = max(x, int(r.Right)+DisplayGap)
	}
	if x+width > int(Screen.Right) || height > int(Screen.Bottom) {
		return 0, 0, fmt.Errorf("a %dx%d workload window does not fit right of the xterms (from x=%d) on the %dx%d screen: make -display-size smaller",
			width, height, x, Screen.Right, Screen.Bottom)
	}
	return x, 0, nil
}
