package spicelive

import (
	"errors"
	"fmt"
	"time"

	"github.com/shakenfist/quicbench/measure/spicelive/xsession"
)

// SetDisplayFlags sets c's display workload and its knobs from a
// command's flags: display (none, video or images), size (WIDTHxHEIGHT, or
// "" for the workload's default), frame rate, image interval and key
// timeout. given says whether the flag of that name (display-size,
// frame-rate, image-interval, key-timeout) was set: a knob is refused
// without a workload, or with a workload it is not for.
func (c *Config) SetDisplayFlags(display, size string, frameRate int, imageInterval, keyTimeout time.Duration, given func(name string) bool) error {
	if err := c.setDisplay(display); err != nil {
		return err
	}
	var errs []error
	for _, k := range []struct{ name, use string }{{"display-size", ""}, {"frame-rate", xsession.DisplayVideo},
		{"image-interval", xsession.DisplayImages}, {"key-timeout", ""}} {
		switch {
		case !given(k.name):
		case c.Display == xsession.DisplayNone:
			errs = append(errs, fmt.Errorf("-%s goes with a display workload: give -display video or images, or leave it out", k.name))
		case k.use != "" && k.use != c.Display:
			errs = append(errs, fmt.Errorf("-%s is for -display %s: leave it out with -display %s", k.name, k.use, c.Display))
		}
	}
	if c.Display == xsession.DisplayNone || len(errs) > 0 {
		return errors.Join(errs...)
	}
	if size != "" {
		w, h, err := parseSize(size)
		if err != nil {
			return err
		}
		c.DisplayWidth, c.DisplayHeight = w, h
	}
	c.KeyTimeout = keyTimeout
	switch c.Display {
	case xsession.DisplayVideo:
		c.FrameRate = frameRate
	case xsession.DisplayImages:
		c.ImageInterval = imageInterval
	}
	return nil
}
