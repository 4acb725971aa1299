package main

import (
	"strings"
	"testing"
	"time"
)

func TestBuildConfigRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		profiles, losses, arms string
		connects               int
		giveUp                 time.Duration
		want                   string
	}{
		{"80:10", "0", "tcp udp", 10, time.Second, "unknown arm"},
		{"80:10:1", "0", "tcp", 10, time.Second, "carries its own loss"},
		{"80:10", "x", "tcp", 10, time.Second, "loss"},
		{"80:10", "0", "tcp", 0, time.Second, "-connects"},
		{"80:10", "0", "tcp", 10, 0, "-give-up"},
		{"", "0", "tcp", 10, time.Second, "no profiles"},
	} {
		_, err := buildConfig(tc.profiles, tc.losses, tc.arms, tc.connects, 5, tc.giveUp, 0, "w", "", 0)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want it to mention %q", tc, err, tc.want)
		}
	}
	c, err := buildConfig("80:10 150:2", "0 1", "tcp fallback-blocked", 10, 5, time.Second, 0, "w", "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Profiles) != 4 || len(c.Arms) != 2 {
		t.Errorf("2 profiles x 2 losses and 2 arms became %d profiles and %d arms", len(c.Profiles), len(c.Arms))
	}
}
