package simcheck

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
)

// Run and RunHeadline refuse what they cannot use, naming the field,
// before anything runs.
func TestRefusesBadConfig(t *testing.T) {
	good := Config{Profiles: []string{"80:10"}, Probes: small}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no profiles", func(c *Config) { c.Profiles = nil }, "Config.Profiles is empty"},
		{"packet", func(c *Config) { c.Probes.PacketSize = 9000 }, "Probes.PacketSize 9000"},
		{"bulk", func(c *Config) { c.Probes.BulkWarmup = c.Probes.Bulk }, "Probes.Bulk"},
		{"echoes", func(c *Config) { c.Probes.Echoes = 0 }, "Probes.Echoes 0"},
		{"spacing", func(c *Config) { c.Probes.Spacing = 0 }, "Spacing 0s"},
	} {
		c := good
		tc.edit(&c)
		if tab, err := Run(context.Background(), t, c); err == nil || !strings.Contains(err.Error(), tc.want) || len(tab.Rows) != 0 {
			t.Errorf("%s: %v (%d rows), want an error saying %q and no rows", tc.name, err, len(tab.Rows), tc.want)
		}
	}
	if _, err := Run(context.Background(), nil, good); err == nil || !strings.Contains(err.Error(), "*testing.T") {
		t.Errorf("Run without a T: %v", err)
	}
	p, _ := shapedlink.ParseProfile("80:10")
	hc := HeadlineConfig{Profile: p, Repeats: 1, Workload: spicelike.Defaults(), PacketSize: 100}
	h, err := RunHeadline(context.Background(), t, hc)
	if err == nil || !strings.Contains(err.Error(), "HeadlineConfig.Repeats 1") || !strings.Contains(err.Error(), "HeadlineConfig.PacketSize 100") || len(h.Arms) != 0 {
		t.Errorf("RunHeadline: %v (arms %v), want both fields named and nothing run", err, h.Arms)
	}
}

// When ctx has ended, the rows still to run say so instead of running,
// and the headline runs no repeat.
func TestEndedContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	tab, err := Run(ctx, t, Config{Profiles: []string{"80:10", "80:10:1"}, Probes: small})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range tab.Rows {
		if !errors.Is(r.Err, context.Canceled) {
			t.Errorf("%s on %s: %v, want the context's error", r.Profile, r.Carrier, r.Err)
		}
	}
	if err := tab.Verdict(); err == nil || !strings.Contains(err.Error(), "4 of 4 rows did not run") {
		t.Errorf("verdict: %v", err)
	}
	p, _ := shapedlink.ParseProfile("80:10")
	w := spicelike.Defaults()
	w.Duration, w.Warmup = 3*time.Second, time.Second
	start := time.Now()
	h, err := RunHeadline(ctx, t, HeadlineConfig{Profile: p, Repeats: 3, Workload: w, PacketSize: 1280})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "after 0 of 3 repeats") || len(h.Cells) != 0 {
		t.Errorf("RunHeadline: %v, %d cells; want the context's error and none", err, len(h.Cells))
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("RunHeadline took %v with its context ended", took)
	}
}
