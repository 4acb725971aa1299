package spicelive

import (
	"flag"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/spicelive/xsession"
)

func goodConfig() Config {
	return Config{Profiles: []string{"80:10", "80:10:1"}, Arms: []measure.Arm{measure.TCP, measure.QUIC},
		Readings: []string{ReadingLive, ReadingReplay}, Repeats: 2, Duration: 30 * time.Second, Warmup: 5 * time.Second, CC: "reno",
		KeyInterval: 500 * time.Millisecond, BusyInterval: 50 * time.Millisecond, Settle: 2 * time.Second, Reference: "1:100",
		Workdir: "w", SessionTimeout: time.Minute}
}

// Run refuses a Config built in Go that the command line would have
// refused, naming every problem.
func TestValidateSaysWhatIsWrong(t *testing.T) {
	if err := goodConfig().Validate(); err != nil {
		t.Fatalf("a good config: %v", err)
	}
	for _, tc := range []struct {
		change func(*Config)
		want   []string
	}{
		{func(c *Config) { c.Profiles = []string{"80"} }, []string{`"80"`}},
		{func(c *Config) { c.Profiles = nil }, []string{"no cells, arms or readings"}},
		{func(c *Config) { c.Arms = []measure.Arm{measure.TCP, measure.TCP} }, []string{"names tcp twice"}},
		{func(c *Config) { c.Arms = []measure.Arm{measure.QUICPriority} }, []string{"no channel to prioritise"}},
		{func(c *Config) { c.Readings = []string{"recorded"} }, []string{`"recorded" is not a reading`}},
		{func(c *Config) { c.Control = true }, []string{"the control runs live sessions on the tcp arm"}},
		{func(c *Config) { c.SessionTimeout = 0 }, []string{"SessionTimeout 0s"}},
		{func(c *Config) { c.Repeats, c.Workdir = 0, "" }, []string{"-repeats 0", "-workdir is empty"}},
		{func(c *Config) { c.Backend, c.KeepAwake = "netem", true }, []string{"-backend is netem: leave -keep-awake out"}},
		{func(c *Config) { c.DepartureWindow = 2 * time.Millisecond }, []string{"-departure-window 2ms: give 0"}},
	} {
		c := goodConfig()
		tc.change(&c)
		err := c.Validate()
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%+v: %v, want an error saying %q", c, err, w)
			}
		}
	}
	c := goodConfig()
	c.Control, c.Arms, c.Readings = true, []measure.Arm{measure.TCP}, []string{ReadingLive}
	if err := c.Validate(); err != nil {
		t.Errorf("a control: %v", err)
	}
	c = goodConfig()
	c.KeepAwake, c.DepartureWindow = true, time.Millisecond
	if err := c.Validate(); err != nil {
		t.Errorf("the emulator's settings with the backend left to choose: %v", err)
	}
}
func TestValidateServerOptions(t *testing.T) {
	c := goodConfig()
	c.ServerOptions = []string{"jpeg-wan-compression=sometimes"}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "jpeg-wan-compression") {
		t.Errorf("Validate with a bad server option: %v", err)
	}
}

func TestSettingsFlags(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	set := SettingsFlags(fs)
	if err := fs.Parse([]string{"-server-options", "deferred-fps=10", "-notsent-lowat", "16384", "-spice-rcvbuf", "65536"}); err != nil {
		t.Fatal(err)
	}
	var c Config
	if err := set(&c); err != nil || !slices.Equal(c.ServerOptions, []string{"deferred-fps=10"}) || c.NotSentLowat != 16384 || c.SpiceRcvBuf != 65536 {
		t.Errorf("SettingsFlags gave %+v, %v", c, err)
	}
	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	set = SettingsFlags(fs)
	_ = fs.Parse([]string{"-server-options", "deferred-fps"})
	if err := set(&c); err == nil {
		t.Error("a setting without a value was taken")
	}
}

func TestNoWorkloadHasNoDisplaySpec(t *testing.T) {
	if goodConfig().displaySpec() != nil {
		t.Error("no workload has a spec")
	}
	if s := displayConfig(xsession.DisplayImages).displaySpec(); s == nil || s.Workload != xsession.DisplayImages || s.Width != DefaultImageWidth {
		t.Errorf("the images workload's spec: %+v", s)
	}
}
func TestDiffSettingsNamesWhatDiffers(t *testing.T) {
	a := Config{Profiles: []string{"80:10"}, Repeats: 5, KeyInterval: 500 * time.Millisecond, Workdir: "a"}
	b := a
	b.Repeats, b.KeyInterval, b.Workdir = 3, time.Second, "b"
	d := diffSettings(a, b)
	if !strings.Contains(d, "repeats: 5 there, 3 asked") || !strings.Contains(d, "key_interval_ns") || strings.Contains(d, "profiles") {
		t.Errorf("diff %q", d)
	}
	if diffSettings(a, a) != "" {
		t.Error("a config differs from itself")
	}
}

// A profile with a loss model of its own runs once, as given, whatever the
// loss levels, and its cell records the model's mean loss; one with plain
// loss in its short form is still refused.
func TestOwnLossProfileRunsOnce(t *testing.T) {
	c := goodConfig()
	c.Profiles = nil
	if err := c.SetLists("80:10,loss=ge:0.2525/25 80:10", "0 1", "tcp", "live"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"80:10,loss=ge:0.2525/25", "80:10", "80:10:1"}; !slices.Equal(c.Profiles, want) {
		t.Errorf("Profiles = %q, want %q", c.Profiles, want)
	}
	cell, _, err := c.cell(c.Profiles[0])
	if err != nil {
		t.Fatal(err)
	}
	if cell.Profile != "80:10,loss=ge:0.2525/25" || cell.LossPct < 0.99 || cell.LossPct > 1.01 {
		t.Errorf("cell %q at %v%% loss, want the whole profile at its mean, 1%%", cell.Profile, cell.LossPct)
	}
	c.Profiles = nil
	if err := c.SetLists("80:10:1", "0", "tcp", "live"); err == nil || !strings.Contains(err.Error(), "carries its own loss") {
		t.Errorf("80:10:1 with -losses: err = %v", err)
	}
}
