package fallback

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/shapedlink"
)

// TestValidate: a Config a Go caller got wrong is refused, naming the
// field, before any link is built.
func TestValidate(t *testing.T) {
	p, err := shapedlink.ParseProfile("80:10")
	if err != nil {
		t.Fatal(err)
	}
	valid := Config{Profiles: []shapedlink.Profile{p}, Arms: Arms(), Connects: 2, Channels: 5, GiveUp: time.Second, Workdir: t.TempDir()}
	if err := valid.validate(); err != nil {
		t.Fatalf("a valid config: %v", err)
	}
	for _, tc := range []struct {
		change func(*Config)
		want   string
	}{
		{func(c *Config) { c.Profiles = nil }, "no profiles"},
		{func(c *Config) { c.Profiles = []shapedlink.Profile{{}} }, ""},
		{func(c *Config) { c.Arms = nil }, "no arms"},
		{func(c *Config) { c.Arms = []measure.Arm{"tcp", "udp"} }, `unknown arm "udp"`},
		{func(c *Config) { c.Connects = 0 }, "Connects 0"},
		{func(c *Config) { c.Channels = 0 }, "Channels 0"},
		{func(c *Config) { c.GiveUp = 0 }, "GiveUp 0s"},
		{func(c *Config) { c.Gap = -time.Second }, "Gap -1s"},
		{func(c *Config) { c.Workdir = "" }, "Workdir is empty"},
	} {
		c := valid
		tc.change(&c)
		if err := c.validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("err = %v, want it to mention %q", err, tc.want)
		}
		if _, err := Run(context.Background(), c); err == nil {
			t.Errorf("Run accepted a config that validate refuses (%q)", tc.want)
		}
	}
}
