package xsession

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"time"

	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// gstLaunch is GStreamer's command-line player, which draws the display
// workloads.
const gstLaunch = "gst-launch-1.0"

// StartDisplay starts the display workload d on display and moves its
// window right of the xterms, clear of them, and returns the program and
// the window's rectangle as read back. A program that started is returned
// even with an error, for the caller to stop.
func StartDisplay(ctx context.Context, display string, d DisplaySpec, logf *os.File, xterms ...spicetrace.Rect) (*Program, spicetrace.Rect, error) {
	if miss := DisplayMissing(); miss != "" {
		return nil, spicetrace.Rect{}, fmt.Errorf("%s", miss)
	}
	args, err := d.pipeline()
	if err != nil {
		return nil, spicetrace.Rect{}, err
	}
	x, y, err := placeDisplay(d.Width, d.Height, xterms...)
	if err != nil {
		return nil, spicetrace.Rect{}, err
	}
	var extra []*os.File
	if d.Workload == DisplayImages {
		// The noise the images are made of.
		r, err := os.Open("/dev/urandom")
		if err != nil {
			return nil, spicetrace.Rect{}, err
		}
		defer r.Close()
		extra = append(extra, r)
	}
	p, err := StartProgram(gstLaunch, args, []string{"DISPLAY=" + display}, logf, extra...)
	if err != nil {
		return nil, spicetrace.Rect{}, err
	}
	// Without a window manager ximagesink's window opens at +0+0, over the
	// typing xterm, until it is moved.
	win, _, err := WindowRect(ctx, display, displayTitle)
	if err != nil {
		return p, spicetrace.Rect{}, fmt.Errorf("its window: %w", err)
	}
	if _, err := XTool(ctx, display, 10*time.Second, "xdotool", "windowmove", "--sync", win, strconv.Itoa(x), strconv.Itoa(y)); err != nil {
		return p, spicetrace.Rect{}, err
	}
	_, r, err := WindowRect(ctx, display, displayTitle)
	if err != nil {
		return p, r, fmt.Errorf("its window after the move: %w", err)
	}
	for _, t := range xterms {
		if r.Intersects(t) {
			return p, r, fmt.Errorf("its window %+v overlaps an xterm %+v: the typing's draws could not be told apart", r, t)
		}
	}
	return p, r, nil
}

// DisplayMissing says which programs the display workloads need are
// absent, with the packages to install, or "" when none is.
func DisplayMissing() string {
	if _, err := exec.LookPath(gstLaunch); err != nil {
		return "missing " + gstLaunch + ": apt-get install " + displayPackages
	}
	// videotestsrc, rawvideoparse and videoconvert are in the base plugins, ximagesink in
	// gstreamer1.0-x: gst-inspect says whether each loads.
	for _, el := range []string{"videotestsrc", "rawvideoparse", "videoconvert", "ximagesink"} {
		if err := exec.Command("gst-inspect-1.0", "--exists", el).Run(); err != nil {
			return "missing GStreamer's " + el + ": apt-get install " + displayPackages
		}
	}
	return ""
}

// displayPackages are the Debian packages the display workloads need.
const displayPackages = "gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-x"
