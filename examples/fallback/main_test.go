package main

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/linkflag"
)

// parsedLink is the command's link flags parsed from args.
func parsedLink(t testing.TB, args ...string) *linkflag.Flags {
	t.Helper()
	fs := flag.NewFlagSet("fallback", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	link := linkFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatalf("%q: %v", args, err)
	}
	return link
}

func TestBuildConfigRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		link         []string
		losses, arms string
		connects     int
		giveUp       time.Duration
		want         string
	}{
		{nil, "0", "tcp udp", 10, time.Second, "unknown arm"},
		{[]string{"-profiles", "80:10:1"}, "0", "tcp", 10, time.Second, "carries its own loss"},
		{nil, "x", "tcp", 10, time.Second, "loss"},
		{nil, "0", "tcp", 0, time.Second, "-connects"},
		{nil, "0", "tcp", 10, 0, "-give-up"},
		// The link flags are linkflag's, checked as every command checks
		// them.
		{[]string{"-profiles", ""}, "0", "tcp", 10, time.Second, "-profiles: shapedlink: no profiles given"},
		{[]string{"-profiles", "80:10 80:10.0"}, "0", "tcp", 10, time.Second, "-profiles: profile 80:10 is given twice"},
		{[]string{"-backend", "tc"}, "0", "tcp", 10, time.Second, `-backend "tc": want netem, emulator or empty`},
	} {
		_, err := buildConfig(parsedLink(t, tc.link...), tc.losses, tc.arms, tc.connects, 5, tc.giveUp, 0, "w")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: err = %v, want it to mention %q", tc, err, tc.want)
		}
	}
	c, err := buildConfig(parsedLink(t, "-backend", "emulator", "-seed", "7"), "0 1", "tcp fallback-blocked", 10, 5, time.Second, 0, "w")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Profiles) != 4 || len(c.Arms) != 2 {
		t.Errorf("2 profiles x 2 losses and 2 arms became %d profiles and %d arms", len(c.Profiles), len(c.Arms))
	}
	if c.Link.Backend != shapedlink.BackendEmulator || c.Link.Seed != 7 {
		t.Errorf("-backend emulator -seed 7 became %+v", c.Link)
	}
}
