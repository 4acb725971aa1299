package spicelive

import (
	"bytes"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
	"github.com/shakenfist/quicbench/stats"
	"github.com/shakenfist/quicbench/transport"
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
	if err := c.SetDisplay(w); err != nil {
		panic(err)
	}
	return c
}

func TestSetDisplaySetsTheWorkloadsDefaults(t *testing.T) {
	v, im := displayConfig("video"), displayConfig("images")
	if v.Display != DisplayVideo || v.DisplayWidth != DefaultVideoWidth || v.DisplayHeight != DefaultVideoHeight || v.FrameRate != DefaultFrameRate ||
		v.ImageInterval != 0 || v.KeyTimeout != DefaultKeyTimeout {
		t.Errorf("video: %+v", v)
	}
	if im.Display != DisplayImages || im.DisplayWidth != DefaultImageWidth || im.ImageInterval != DefaultImageInterval || im.FrameRate != 0 {
		t.Errorf("images: %+v", im)
	}
	for _, c := range []Config{v, im} {
		if err := c.Validate(); err != nil {
			t.Errorf("%s with its defaults: %v", c.Display, err)
		}
	}
	n := goodConfig()
	if err := n.SetDisplay("none"); err != nil || n.Display != DisplayNone || n.KeyTimeout != 0 {
		t.Errorf("none: %v %+v", err, n)
	}
	if err := n.SetDisplay("movie"); err == nil || !strings.Contains(err.Error(), `"movie"`) {
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
			{"all three", func(c *Config) { c.Readings, c.Recording = AllReadings(), DisplayVideo }, true},
			{"control", func(c *Config) {
				c.Control, c.Arms, c.Readings = true, []transport.Arm{transport.ArmTCP}, []string{ReadingLive}
			}, true},
			{"replay recorded here", func(c *Config) { c.Readings = []string{ReadingReplay, ReadingSynthetic} }, true},
			{"replay shipped", func(c *Config) { c.Readings, c.Recording = []string{ReadingReplay, ReadingSynthetic}, DisplayVideo }, false},
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

func TestPipelines(t *testing.T) {
	v, err := displayConfig("video").displaySpec().pipeline()
	if err != nil {
		t.Fatal(err)
	}
	vs := strings.Join(v, " ")
	for _, want := range []string{"videotestsrc is-live=true pattern=zone-plate", "video/x-raw,width=520,height=560,framerate=25/1", "! ximagesink"} {
		if !strings.Contains(vs, want) {
			t.Errorf("the video pipeline %q lacks %q", vs, want)
		}
	}
	c := displayConfig("images")
	c.ImageInterval = 400 * time.Millisecond
	im, err := c.displaySpec().pipeline()
	if err != nil {
		t.Fatal(err)
	}
	is := strings.Join(im, " ")
	for _, want := range []string{"fdsrc fd=3 ! rawvideoparse width=260 height=200 format=bgrx framerate=1000/400", "! ximagesink"} {
		if !strings.Contains(is, want) {
			t.Errorf("the images pipeline %q lacks %q", is, want)
		}
	}
	if goodConfig().displaySpec() != nil {
		t.Error("no workload has a spec")
	}
	if _, err := (displaySpec{Workload: "movie", Width: 10, Height: 10}).pipeline(); err == nil {
		t.Error("an unknown workload has a pipeline")
	}
}

func TestPlaceDisplayRightOfTheXterms(t *testing.T) {
	x, y, err := placeDisplay(520, 560, typingArea, busyArea)
	if err != nil || x != 492 || y != 0 {
		t.Errorf("placed at %d,%d (%v), want 492,0", x, y, err)
	}
	r := spicetrace.Rect{Left: int32(x), Top: int32(y), Right: int32(x + 520), Bottom: int32(y + 560)}
	if r.Intersects(typingArea) || r.Intersects(busyArea) || r.Right > screen.Right {
		t.Errorf("%+v overlaps an xterm or leaves the screen", r)
	}
	if _, _, err := placeDisplay(540, 100, typingArea, busyArea); err == nil || !strings.Contains(err.Error(), "does not fit") {
		t.Errorf("a window too wide: %v", err)
	}
}

// writeDisplayRuns writes live runs of arm with the given display
// throughputs, each with keys samples after a 1 s warm-up.
func writeDisplayRuns(t *testing.T, c Config, reading string, arm transport.Arm, cell results.Cell, base time.Duration, keys int, mbit ...float64) {
	t.Helper()
	for i, m := range mbit {
		r := fakeRun(cell, arm, i+1, base)
		r.Samples = nil
		for k := range keys {
			r.Samples = append(r.Samples, stats.Sample{Offset: time.Second + time.Duration(k)*500*time.Millisecond, RTT: base + time.Duration(k%20)*time.Millisecond})
		}
		r.ThroughputMbit = m
		if err := results.WriteJSON(filepath.Join(results.RunDir(c.ReadingDir(reading), cell, string(arm), i+1), results.RunFile), r); err != nil {
			t.Fatal(err)
		}
	}
}

// With a workload the summary lists each live run's display against the
// link and beside the synthetic reading's bulk rate for the same arm and
// cell, marks the runs that did not saturate it (putting each down to the
// transport or the workload by that rate, or saying it is absent) or timed
// too few keys, and names the first beside the live verdict; without one
// it says nothing of the kind.
func TestSummaryMarksRunsThatDidNotSaturate(t *testing.T) {
	c := displayConfig(DisplayVideo)
	c.Workdir, c.Readings, c.Arms, c.Repeats, c.Warmup = t.TempDir(), []string{ReadingLive, ReadingSynthetic}, []transport.Arm{transport.ArmTCP, transport.ArmQUIC}, 2, time.Second
	cell, _, _ := c.cell("80:10:1")
	cell.CC = "reno"
	writeDisplayRuns(t, c, ReadingLive, transport.ArmTCP, cell, ms(900), 120, 9.1, 7.0)
	writeDisplayRuns(t, c, ReadingLive, transport.ArmQUIC, cell, ms(1900), 120, 6.9, 8.2)
	writeDisplayRuns(t, c, ReadingSynthetic, transport.ArmTCP, cell, ms(200), 50, 2.5, 2.7)
	var out bytes.Buffer
	if err := Summarise(&out, c); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"Display workload: video, a 520x560 window at 25 frames a second.",
		"the synthetic reading's bulk rate for the same arm, cell and loss, the transport's own ceiling on that link",
		"| live | quic against tcp | +1000.0 |",
		"Did not saturate: quic r1 (6.90 Mbit/s).",
		"| tcp | r1 | 9.10 | 91% | 2.60 | 120 |  |",
		"| tcp | r2 | 7.00 | 70% | 2.60 | 120 |  |",
		"| quic | r1 | 6.90 | 69% | none: no synthetic reading of this arm in this cell | 120 | did not saturate; no synthetic reading to tell the transport's limit from the workload's |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the summary lacks %q:\n%s", want, s)
		}
	}
	// Under loss the transport's own ceiling decides: quic's synthetic
	// bulk at 7 Mbit/s puts a 6.9 display down to the transport, at 10
	// to the workload.
	for _, tc := range []struct {
		ceiling float64
		want    string
	}{
		{7, "| quic | r1 | 6.90 | 69% | 7.00 | 120 | did not saturate: the transport's limit (99% of its synthetic 7.00) |"},
		{10, "| quic | r1 | 6.90 | 69% | 10.00 | 120 | did not saturate: the workload's limit (69% of the transport's synthetic 10.00) |"},
	} {
		ceiling, want := tc.ceiling, tc.want
		writeDisplayRuns(t, c, ReadingSynthetic, transport.ArmQUIC, cell, ms(200), 50, ceiling, ceiling)
		out.Reset()
		if err := Summarise(&out, c); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("the summary lacks %q:\n%s", want, out.String())
		}
	}
	writeDisplayRuns(t, c, ReadingLive, transport.ArmQUIC, cell, ms(1900), 80, 8.2)
	out.Reset()
	if err := Summarise(&out, c); err != nil {
		t.Fatal(err)
	}
	if want := "| quic | r1 | 8.20 | 82% | 10.00 | 80 | fewer than 100 timed keys |"; !strings.Contains(out.String(), want) {
		t.Errorf("the summary lacks %q:\n%s", want, out.String())
	}
	c.Display, c.DisplayWidth, c.DisplayHeight, c.FrameRate, c.KeyTimeout = DisplayNone, 0, 0, 0, 0
	out.Reset()
	if err := Summarise(&out, c); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); strings.Contains(s, "saturate") || strings.Contains(s, "Display workload") {
		t.Errorf("a summary without a workload speaks of one:\n%s", s)
	}
}
