package spicelive

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/spicelive/xsession"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

func displayMsg(t time.Duration, size int, stream bool) spicetrace.Record {
	r := draw(t, spicetrace.Rect{Top: 0, Left: 492, Bottom: 300, Right: 892}, true)
	r.Size, r.Draw.Stream = size, stream
	return r
}

// The display's load counts the display channel's messages from the
// server in the measured part only, stream frames apart, and reads it
// against the link's rate.
func TestDisplayLoadCountsTheMeasuredPart(t *testing.T) {
	s := time.Second
	other := displayMsg(1500*time.Millisecond, 1000, false)
	other.ChannelType = "cursor"
	up := displayMsg(1500*time.Millisecond, 1000, false)
	up.Dir = spicetrace.ClientToServer
	tr := &spicetrace.Trace{Records: []spicetrace.Record{
		displayMsg(999*time.Millisecond, 5000, false), // before the measured part
		displayMsg(s, 250_000, false),
		other, up,
		displayMsg(2*s, 500_000, true),
		displayMsg(3*s-1, 250_000, false),
		displayMsg(3*s, 9000, false), // its end is not in it
	}}
	l, err := displayLoad(tr, s, 3*s, 5)
	if err != nil {
		t.Fatal(err)
	}
	// 1 MB in 2 s is 4 Mbit/s, 80% of 5.
	if l.Bytes != 1_000_000 || l.StreamBytes != 500_000 || l.Measured != 2*s || math.Abs(l.Mbit-4) > 1e-9 ||
		math.Abs(l.Share-0.8) > 1e-9 || !l.Saturated || l.LinkMbit != 5 {
		t.Errorf("%+v, want 1 MB of which 0.5 MB stream in 2 s: 4 Mbit/s, 80%% of 5, saturated", l)
	}
	if l, _ := displayLoad(tr, s, 3*s, 6); l.Saturated {
		t.Errorf("4 of 6 Mbit/s (%.0f%%) counted as saturated", l.Share*100)
	}
	if _, err := displayLoad(tr, 3*s, 3*s, 5); err == nil || !strings.Contains(err.Error(), "warm-up") {
		t.Errorf("an empty measured part: %v", err)
	}
	if _, err := displayLoad(tr, s, 3*s, 0); err == nil {
		t.Error("a link of no rate was accepted")
	}
}

func TestLimitedByTransportIsSeventyPercentOfItsCeiling(t *testing.T) {
	for _, tc := range []struct {
		display, ceiling float64
		want             bool
	}{
		{7, 10, true}, {6.99, 10, false}, {2.6, 2.6, true}, {3, 2.6, true}, {1, 2.6, false}, {1, 0, false},
	} {
		if got := LimitedByTransport(tc.display, tc.ceiling); got != tc.want {
			t.Errorf("LimitedByTransport(%v, %v) = %v, want %v", tc.display, tc.ceiling, got, tc.want)
		}
	}
}

func TestSaturatedIsSeventyPercentOfTheLink(t *testing.T) {
	for _, tc := range []struct {
		display, link float64
		want          bool
	}{
		{7, 10, true}, {6.99, 10, false}, {1.4, 2, true}, {1.39, 2, false}, {9.5, 10, true}, {0, 10, false}, {1, 0, false},
	} {
		if got := Saturated(tc.display, tc.link); got != tc.want {
			t.Errorf("Saturated(%v, %v) = %v, want %v", tc.display, tc.link, got, tc.want)
		}
	}
}

func displayConfig(w string) Config {
	c := goodConfig()
	c.Duration = DefaultDisplayDuration
	if err := c.setDisplay(w); err != nil {
		panic(err)
	}
	return c
}

func TestSetDisplaySetsTheWorkloadsDefaults(t *testing.T) {
	v, im := displayConfig("video"), displayConfig("images")
	if v.Display != xsession.DisplayVideo || v.DisplayWidth != DefaultVideoWidth || v.DisplayHeight != DefaultVideoHeight || v.FrameRate != DefaultFrameRate ||
		v.ImageInterval != 0 || v.KeyTimeout != DefaultKeyTimeout {
		t.Errorf("video: %+v", v)
	}
	if im.Display != xsession.DisplayImages || im.DisplayWidth != DefaultImageWidth || im.ImageInterval != DefaultImageInterval || im.FrameRate != 0 {
		t.Errorf("images: %+v", im)
	}
	for _, c := range []Config{v, im} {
		if err := c.Validate(); err != nil {
			t.Errorf("%s with its defaults: %v", c.Display, err)
		}
	}
	n := goodConfig()
	if err := n.setDisplay("none"); err != nil || n.Display != xsession.DisplayNone || n.KeyTimeout != 0 {
		t.Errorf("none: %v %+v", err, n)
	}
	if err := n.setDisplay("movie"); err == nil || !strings.Contains(err.Error(), `"movie"`) {
		t.Errorf("an unknown workload: %v", err)
	}
}

// A work directory made before the workloads existed is resumed by a
// Config without one: its settings' JSON has none of their fields.
func TestNoWorkloadKeepsTheSettings(t *testing.T) {
	b, err := json.Marshal(goodConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"display", "frame_rate", "image_interval", "key_timeout"} {
		if strings.Contains(string(b), k) {
			t.Errorf("the settings without a workload name %s: %s", k, b)
		}
	}
}

func TestValidateDisplaySaysWhatIsWrong(t *testing.T) {
	for _, tc := range []struct {
		w      string
		change func(*Config)
		want   string
	}{
		{"", func(c *Config) { c.Display = "none" }, `-display "none"`},
		{"", func(c *Config) { c.FrameRate = 25 }, "go with a display workload"},
		{"", func(c *Config) { c.KeyTimeout = time.Second }, "go with a display workload"},
		{"video", func(c *Config) { c.DisplayWidth = 600 }, "-display-size 600x560"},
		{"video", func(c *Config) { c.DisplayHeight = 50 }, "-display-size 520x50"},
		{"video", func(c *Config) { c.FrameRate = 100 }, "-frame-rate 100"},
		{"video", func(c *Config) { c.ImageInterval = time.Second }, "-image-interval is the images workload's"},
		{"images", func(c *Config) { c.FrameRate = 10 }, "-frame-rate is the video workload's"},
		{"images", func(c *Config) { c.ImageInterval = 10 * time.Millisecond }, "-image-interval 10ms"},
		{"images", func(c *Config) { c.KeyTimeout = 0 }, "-key-timeout 0s"},
		{"images", func(c *Config) { c.Duration, c.KeyInterval = 10*time.Minute, 500*time.Millisecond }, "types 1200 keys"},
	} {
		c := goodConfig()
		if tc.w != "" {
			c = displayConfig(tc.w)
		}
		tc.change(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %+v: %v, want an error saying %q", tc.w, c, err, tc.want)
		}
	}
}

// The typed keys' count (what the typing xterm holds) is checked only
// when the run
// makes live sessions, the only ones that type keys: with the live
// reading, the control, or the replay reading recording its session over
// the reference link. The replay reading playing a shipped recording and
// the synthetic one take either run length.
func TestKeyChecksOnlyWithLiveSessions(t *testing.T) {
	for _, k := range []struct {
		name   string
		change func(*Config)
		want   string
	}{
		{"10m", func(c *Config) { c.Duration = 10 * time.Minute }, "types 1200 keys"},
	} {
		for _, r := range []struct {
			name string
			set  func(*Config)
			live bool
		}{
			{"live", func(c *Config) { c.Readings = []string{ReadingLive} }, true},
			{"all three", func(c *Config) { c.Readings, c.Recording = AllReadings(), xsession.DisplayVideo }, true},
			{"control", func(c *Config) {
				c.Control, c.Arms, c.Readings = true, []measure.Arm{measure.TCP}, []string{ReadingLive}
			}, true},
			{"replay recorded here", func(c *Config) { c.Readings = []string{ReadingReplay, ReadingSynthetic} }, true},
			{"replay shipped", func(c *Config) {
				c.Readings, c.Recording = []string{ReadingReplay, ReadingSynthetic}, xsession.DisplayVideo
			}, false},
			{"synthetic", func(c *Config) { c.Readings = []string{ReadingSynthetic} }, false},
		} {
			c := displayConfig("video")
			r.set(&c)
			if err := c.Validate(); err != nil {
				t.Fatalf("%s: %v", r.name, err)
			}
			k.change(&c)
			err := c.Validate()
			switch {
			case r.live && (err == nil || !strings.Contains(err.Error(), k.want)):
				t.Errorf("%s for %s: %v, want an error saying %q", k.name, r.name, err, k.want)
			case !r.live && err != nil:
				t.Errorf("%s for %s, where no keys are typed: %v, want it taken", k.name, r.name, err)
			}
		}
	}
}
