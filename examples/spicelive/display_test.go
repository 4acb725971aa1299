package main

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/spicelive"
	"github.com/shakenfist/quicbench/measure/spicelive/xsession"
)

// -display chooses a workload with its knobs' defaults and a run long
// enough for 100 timed keys; without it the settings are today's.
func TestDisplayFlags(t *testing.T) {
	c, _, err := parseFlags(nil, io.Discard, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if c.Display != xsession.DisplayNone || c.DisplayWidth != 0 || c.FrameRate != 0 || c.ImageInterval != 0 || c.KeyTimeout != 0 || c.Duration != 45*time.Second {
		t.Errorf("no workload: %+v", c)
	}
	c, _, err = parseFlags([]string{"-display", "video"}, io.Discard, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if c.Display != xsession.DisplayVideo || c.DisplayWidth != spicelive.DefaultVideoWidth || c.DisplayHeight != spicelive.DefaultVideoHeight ||
		c.FrameRate != spicelive.DefaultFrameRate || c.ImageInterval != 0 || c.KeyTimeout != spicelive.DefaultKeyTimeout ||
		c.Duration != spicelive.DefaultDisplayDuration {
		t.Errorf("-display video: %+v", c)
	}
	c, _, err = parseFlags([]string{"-display", "images", "-display-size", "300x200", "-image-interval", "1s", "-key-timeout", "30s", "-duration", "100"},
		io.Discard, noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if c.Display != xsession.DisplayImages || c.DisplayWidth != 300 || c.DisplayHeight != 200 || c.ImageInterval != time.Second ||
		c.KeyTimeout != 30*time.Second || c.Duration != 100*time.Second || c.FrameRate != 0 {
		t.Errorf("-display images with its knobs: %+v", c)
	}
	c, _, err = parseFlags([]string{"-display", "images"}, io.Discard, func(k string) string { return map[string]string{"DURATION": "60"}[k] })
	if err != nil || c.Duration != time.Minute {
		t.Errorf("$DURATION with a workload: %v, %v", err, c.Duration)
	}
}

// Without a live session no keys are typed, so a run of any length is
// taken (TestDisplayFlagsSayWhatIsWrong has a long one refused with one).
func TestDisplayFlagsWithoutLiveSessions(t *testing.T) {
	for _, readings := range []string{"replay synthetic", "synthetic"} {
		c, _, err := parseFlags([]string{"-display", "video", "-duration", "20", "-readings", readings}, io.Discard, noEnv)
		if err != nil || c.Duration != 20*time.Second || c.KeyTimeout != spicelive.DefaultKeyTimeout {
			t.Errorf("-display video -duration 20 -readings %q: %v, %v", readings, err, c.Duration)
		}
	}
}

func TestDisplayFlagsSayWhatIsWrong(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-display", "movie"}, `-display "movie"`},
		{[]string{"-frame-rate", "30"}, "-frame-rate goes with a display workload"},
		{[]string{"-display", "none", "-key-timeout", "5s"}, "-key-timeout goes with a display workload"},
		{[]string{"-display", "video", "-image-interval", "1s"}, "-image-interval is for -display images"},
		{[]string{"-display", "images", "-frame-rate", "10"}, "-frame-rate is for -display video"},
		{[]string{"-display", "images", "-display-size", "big"}, `-display-size "big"`},
		{[]string{"-display", "video", "-display-size", "900x500"}, "-display-size 900x500"},
		{[]string{"-display", "video", "-duration", "600"}, "types 1200 keys"},
		{[]string{"-display", "video", "-duration", "600", "-readings", "replay synthetic", "-replay", "reference"}, "types 1200 keys"},
		{[]string{"-record", "video", "-duration", "600"}, "types 1200 keys"},
		{[]string{"-summary", "-display", "video"}, "-display is not used by -summary"},
	} {
		_, _, err := parseFlags(tc.args, io.Discard, noEnv)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error saying %q", tc.args, err, tc.want)
		}
	}
}
