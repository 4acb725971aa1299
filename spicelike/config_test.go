package spicelike

import (
	"encoding/json"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDefaultsAreValidAndMatchTheReference(t *testing.T) {
	c := Defaults()
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	if c.Duration != 45*time.Second || c.Warmup != 5*time.Second || c.BulkBufferSize != 65536 ||
		c.EchoSize != 64 || c.EchoGap != 20*time.Millisecond || c.Timeout != 10*time.Second || c.BulkRateCap != 0 {
		t.Errorf("defaults drifted from the reference: %+v", c)
	}
	names := []string{"main", "display", "inputs", "cursor", "playback"}
	roles := []Role{Quiet, Saturating, Interactive, Quiet, Quiet}
	for i, ch := range c.Channels {
		if ch.Name != names[i] || ch.Role != roles[i] {
			t.Errorf("channel %d is %+v, want %s (%s)", i, ch, names[i], roles[i])
		}
	}
}

func TestValidateRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"zero config", func(c *Config) { *c = Config{} }, "no channels"},
		{"zero duration", func(c *Config) { c.Duration = 0 }, "Duration is 0s"},
		{"warmup too long", func(c *Config) { c.Warmup = c.Duration }, "not shorter than Duration"},
		{"negative warmup", func(c *Config) { c.Warmup = -1 }, "Warmup is -1ns"},
		{"buffer", func(c *Config) { c.BulkBufferSize = 0 }, "BulkBufferSize is 0"},
		{"cap", func(c *Config) { c.BulkRateCap = -5 }, "BulkRateCap is -5"},
		{"echo small", func(c *Config) { c.EchoSize = 8 }, "EchoSize is 8"},
		{"echo big", func(c *Config) { c.EchoSize = 70000 }, "EchoSize is 70000"},
		{"gap", func(c *Config) { c.EchoGap = -time.Millisecond }, "EchoGap is -1ms"},
		{"timeout", func(c *Config) { c.Timeout = 0 }, "Timeout is 0s"},
		{"dup name", func(c *Config) { c.Channels[3].Name = "main" }, `"main" is used twice`},
		{"no name", func(c *Config) { c.Channels[0].Name = "" }, "channel 0 has no name"},
		{"two bulk", func(c *Config) { c.Channels[0].Role = Saturating }, "2 saturating channels"},
		{"two echo", func(c *Config) { c.Channels[0].Role = Interactive }, "2 interactive channels"},
		{"bad role", func(c *Config) { c.Channels[0].Role = 7 }, "unknown role 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Defaults()
			tc.mod(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate() = %v, want an error containing %q", err, tc.want)
			}
		})
	}
	// Zero values that are meaningful are accepted.
	c := Defaults()
	c.Warmup, c.EchoGap, c.BulkRateCap = 0, 0, 0
	if err := c.Validate(); err != nil {
		t.Errorf("zero warm-up, gap and cap: %v", err)
	}
}

func TestSessionChannels(t *testing.T) {
	three, err := SessionChannels(3)
	if err != nil || !slices.Equal(three, defaultChannels()) {
		t.Errorf("SessionChannels(3) = %v, %v; want defaultChannels()", three, err)
	}
	for _, n := range []int{0, 1, 10, maxChannels - 2} {
		chans, err := SessionChannels(n)
		if err != nil {
			t.Fatal(err)
		}
		c := Defaults()
		c.Channels = chans
		if err := c.Validate(); err != nil || len(chans) != n+2 {
			t.Errorf("SessionChannels(%d): %d channels, %v", n, len(chans), err)
		}
	}
	if _, err := SessionChannels(-1); err == nil {
		t.Error("SessionChannels(-1) accepted")
	}
	if _, err := SessionChannels(maxChannels - 1); err == nil {
		t.Error("too many channels accepted")
	}
}

func TestRoleJSON(t *testing.T) {
	b, err := json.Marshal(defaultChannels()[:3])
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"name":"main","role":"quiet"},{"name":"display","role":"saturating"},{"name":"inputs","role":"interactive"}]`
	if string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	var back []Channel
	if err := json.Unmarshal(b, &back); err != nil || !slices.Equal(back, defaultChannels()[:3]) {
		t.Errorf("round trip: %v, %v", back, err)
	}
	if err := json.Unmarshal([]byte(`[{"name":"x","role":"loud"}]`), &back); err == nil {
		t.Error("unknown role accepted")
	}
}

func TestMessageChecks(t *testing.T) {
	a, b := make([]byte, 64), make([]byte, 64)
	fillMessage(a, kindRequest, 7)
	fillMessage(b, kindRequest, 8)
	if slices.Equal(a[16:], b[16:]) {
		t.Error("pattern does not depend on the sequence number")
	}
	if k, err := checkHeader(a, 64); err != nil || k != kindRequest {
		t.Errorf("checkHeader: %c, %v", k, err)
	}
	if _, err := checkHeader(a, 65); err == nil {
		t.Error("size mismatch not detected")
	}
	a[5] = 0
	if _, err := checkHeader(a, 64); err == nil {
		t.Error("bad magic not detected")
	}
}

func TestRunRejectsBadArguments(t *testing.T) {
	ctx := t.Context()
	cfg := shortConfig(100*time.Millisecond, 0)
	cc, _ := pipes(t, 5)
	if _, err := RunClient(ctx, cfg, rws(cc[:4])); err == nil || !strings.Contains(err.Error(), "4 channels given for a config of 5") {
		t.Errorf("short channel list: %v", err)
	}
	chans := rws(cc)
	chans[2] = nil
	if _, err := RunServer(ctx, cfg, chans); err == nil || !strings.Contains(err.Error(), "channel 2 (inputs) is nil") {
		t.Errorf("nil channel: %v", err)
	}
	bad := cfg
	bad.Timeout = 0
	if _, err := RunClient(ctx, bad, rws(cc)); err == nil || !strings.Contains(err.Error(), "Timeout is 0s") {
		t.Errorf("bad config: %v", err)
	}
	if _, err := RunClients[net.Conn](ctx, cfg, nil); err == nil {
		t.Error("RunClients with no sessions accepted")
	}
}
