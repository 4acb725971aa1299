package spicelive

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/shakenfist/quicbench/measure/spicelive/keydraw"
	"github.com/shakenfist/quicbench/measure/spicelive/xsession"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// The display workloads' defaults, tuned so that both decisive links
// (80:10 and 150:2) carry at least SaturatedShare of their rate on the
// display channel when lossless (docs/spice-live.md has the pilot).
const (
	DefaultVideoWidth    = 520
	DefaultVideoHeight   = 560
	DefaultFrameRate     = 25
	DefaultImageWidth    = 260
	DefaultImageHeight   = 200
	DefaultImageInterval = 100 * time.Millisecond
	DefaultKeyTimeout    = 20 * time.Second
	// DefaultDisplayDuration is the command's run length with a workload:
	// at a 500 ms key interval, past a warm-up of up to 15 s and the last
	// DefaultKeyTimeout, over 100 timed keys.
	DefaultDisplayDuration = 90 * time.Second
)

// SaturatedShare is the share of the link's rate that a live run's display
// channel must carry in the measured part for the run to count as one
// whose display filled the link.
const SaturatedShare = 0.7

// MinTimedKeys is how many keys a live run with a workload should time in
// its measured part; the summary marks runs with fewer.
const MinTimedKeys = 100

// parseDisplay reads a display workload's name: none, video or images
// (none is xsession.DisplayNone, the empty string).
func parseDisplay(s string) (string, error) {
	switch s {
	case "none", xsession.DisplayNone:
		return xsession.DisplayNone, nil
	case xsession.DisplayVideo, xsession.DisplayImages:
		return s, nil
	}
	return "", fmt.Errorf("-display %q: want none, video or images", s)
}

// setDisplay sets the workload and, when it is one, each knob still zero
// to its default. With none the knobs stay as they are, which Validate
// wants zero.
func (c *Config) setDisplay(workload string) error {
	w, err := parseDisplay(workload)
	if err != nil {
		return err
	}
	c.Display = w
	if w == xsession.DisplayNone {
		return nil
	}
	if c.DisplayWidth == 0 && c.DisplayHeight == 0 {
		c.DisplayWidth, c.DisplayHeight = DefaultImageWidth, DefaultImageHeight
		if w == xsession.DisplayVideo {
			c.DisplayWidth, c.DisplayHeight = DefaultVideoWidth, DefaultVideoHeight
		}
	}
	if w == xsession.DisplayVideo && c.FrameRate == 0 {
		c.FrameRate = DefaultFrameRate
	}
	if w == xsession.DisplayImages && c.ImageInterval == 0 {
		c.ImageInterval = DefaultImageInterval
	}
	if c.KeyTimeout == 0 {
		c.KeyTimeout = DefaultKeyTimeout
	}
	return nil
}

// parseSize reads a window size such as "520x400".
func parseSize(s string) (w, h int, err error) {
	a, b, ok := strings.Cut(s, "x")
	w, errw := strconv.Atoi(a)
	h, errh := strconv.Atoi(b)
	if !ok || errw != nil || errh != nil {
		return 0, 0, fmt.Errorf("-display-size %q: want WIDTHxHEIGHT in pixels, e.g. %dx%d", s, DefaultImageWidth, DefaultImageHeight)
	}
	return w, h, nil
}

// checkDisplay says what is wrong with the workload's settings; live says
// whether the run makes live sessions (Config.runsLive), the only ones
// that type keys, whose timing and count it then checks.
func (c Config) checkDisplay(live bool) []error {
	var errs []error
	bad := func(format string, a ...any) { errs = append(errs, fmt.Errorf(format, a...)) }
	if _, err := parseDisplay(c.Display); err != nil || c.Display == "none" {
		bad("-display %q: want video, images, or empty for none", c.Display)
		return errs
	}
	if c.Display == xsession.DisplayNone {
		if c.DisplayWidth != 0 || c.DisplayHeight != 0 || c.FrameRate != 0 || c.ImageInterval != 0 || c.KeyTimeout != 0 {
			bad("-display-size, -frame-rate, -image-interval and -key-timeout go with a display workload: give -display video or images, or leave them out")
		}
		return errs
	}
	// The window goes right of the xterms (484 pixels wide with Debian's
	// fixed font) on the 1024x768 screen.
	if c.DisplayWidth < 96 || c.DisplayWidth > 520 || c.DisplayHeight < 96 || c.DisplayHeight > int(xsession.Screen.Bottom) {
		bad("-display-size %dx%d: want 96 to 520 pixels wide (it sits right of the xterms) and 96 to %d high", c.DisplayWidth, c.DisplayHeight, xsession.Screen.Bottom)
	}
	if c.KeyTimeout < time.Second || c.KeyTimeout > time.Minute {
		bad("-key-timeout %v: want 1s to 1m", c.KeyTimeout)
	}
	if live && c.KeyInterval > 0 && int(c.Duration/c.KeyInterval) > keydraw.MaxGlyphKeys {
		bad("-duration %v at -key-interval %v types %d keys: the typing xterm holds %d without scrolling; give a shorter run or a longer interval",
			c.Duration, c.KeyInterval, int(c.Duration/c.KeyInterval), keydraw.MaxGlyphKeys)
	}
	switch c.Display {
	case xsession.DisplayVideo:
		if c.FrameRate < 5 || c.FrameRate > 60 {
			bad("-frame-rate %d: want 5 to 60 frames a second (spice-server takes updates closer than 200 ms for video)", c.FrameRate)
		}
		if c.ImageInterval != 0 {
			bad("-image-interval is the images workload's: leave it out with -display video")
		}
	case xsession.DisplayImages:
		if c.ImageInterval < 100*time.Millisecond || c.ImageInterval > 10*time.Second {
			bad("-image-interval %v: want 100ms to 10s", c.ImageInterval)
		}
		if c.FrameRate != 0 {
			bad("-frame-rate is the video workload's: leave it out with -display images")
		}
	}
	return errs
}

// DisplayLoad is what the display channel carried from the server over
// a live run's measured part (the typing after the warm-up), against the
// link's rate.
type DisplayLoad struct {
	// Workload is the run's display workload.
	Workload string `json:"workload"`
	// Bytes are the display channel's messages from the server, header
	// included, read by the client end in the measured part; StreamBytes
	// are those of video stream frames.
	Bytes       int64 `json:"bytes"`
	StreamBytes int64 `json:"stream_bytes"`
	// Measured is the measured part's length.
	Measured time.Duration `json:"measured_ns"`
	// Mbit is Bytes over Measured; LinkMbit the link's rate, and Share
	// the first over the second.
	Mbit     float64 `json:"mbit"`
	LinkMbit float64 `json:"link_mbit"`
	Share    float64 `json:"share"`
	// Saturated says Share reached SaturatedShare.
	Saturated bool `json:"saturated"`
}

// displayLoad reads the display channel's load from tr, a client-end
// trace, over [from, to) of its time, against a link of linkMbit.
func displayLoad(tr *spicetrace.Trace, from, to time.Duration, linkMbit float64) (DisplayLoad, error) {
	var l DisplayLoad
	if to <= from {
		return l, fmt.Errorf("a measured part from %v to %v: the typing ended before the warm-up did", from, to)
	}
	if !(linkMbit > 0) {
		return l, errors.New("the link has no rate to compare the display's with")
	}
	for _, r := range tr.Records {
		if r.ChannelType != "display" || r.Dir != spicetrace.ServerToClient || r.T < from || r.T >= to {
			continue
		}
		l.Bytes += int64(r.Size)
		if r.Draw != nil && r.Draw.Stream {
			l.StreamBytes += int64(r.Size)
		}
	}
	l.Measured = to - from
	l.Mbit = float64(l.Bytes) * 8 / l.Measured.Seconds() / 1e6
	l.LinkMbit = linkMbit
	l.Share = l.Mbit / linkMbit
	l.Saturated = Saturated(l.Mbit, linkMbit)
	return l, nil
}

// Saturated says whether a display that carried displayMbit filled a
// link of linkMbit: at least SaturatedShare of it.
func Saturated(displayMbit, linkMbit float64) bool {
	return linkMbit > 0 && displayMbit >= SaturatedShare*linkMbit
}

// LimitedByTransport says whether a live run whose display carried
// displayMbit was held back by the transport rather than by the workload:
// its display carried at least SaturatedShare of ceilingMbit, what the
// same arm's synthetic bulk channel carries on the same link and loss.
func LimitedByTransport(displayMbit, ceilingMbit float64) bool {
	return ceilingMbit > 0 && displayMbit >= SaturatedShare*ceilingMbit
}

// displaySpec is c's workload for the server role, or nil for none.
func (c Config) displaySpec() *xsession.DisplaySpec {
	if c.Display == xsession.DisplayNone {
		return nil
	}
	return &xsession.DisplaySpec{Workload: c.Display, Width: c.DisplayWidth, Height: c.DisplayHeight, FrameRate: c.FrameRate, ImageInterval: c.ImageInterval}
}
