package spicelive

import (
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/transport"
)

func goodConfig() Config {
	return Config{Profiles: []string{"80:10", "80:10:1"}, Arms: []transport.Arm{transport.ArmTCP, transport.ArmQUIC},
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
		{func(c *Config) { c.Arms = []transport.Arm{transport.ArmTCP, transport.ArmTCP} }, []string{"names tcp twice"}},
		{func(c *Config) { c.Arms = []transport.Arm{transport.ArmQUICPriority} }, []string{"no channel to prioritise"}},
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
	c.Control, c.Arms, c.Readings = true, []transport.Arm{transport.ArmTCP}, []string{ReadingLive}
	if err := c.Validate(); err != nil {
		t.Errorf("a control: %v", err)
	}
	c = goodConfig()
	c.KeepAwake, c.DepartureWindow = true, time.Millisecond
	if err := c.Validate(); err != nil {
		t.Errorf("the emulator's settings with the backend left to choose: %v", err)
	}
}
