package main

import (
	"io"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/shapedlink"
)

// TestLinkFlags: -profile and -backend are linkflag's, read and refused
// as every command reads and refuses them, all wrong ones in one error.
func TestLinkFlags(t *testing.T) {
	c, err := parseFlags([]string{"-profile", "20:5", "-backend", "emulator"}, io.Discard)
	if err != nil || c.Profile.String() != "20:5" || c.Link.Backend != shapedlink.BackendEmulator {
		t.Errorf("-profile 20:5 -backend emulator: %v %+v, %v", c.Profile, c.Link, err)
	}
	_, err = parseFlags([]string{"-profile", "80", "-backend", "tc"}, io.Discard)
	for _, want := range []string{`-profile: shapedlink: profile "80"`, `-backend "tc": want netem, emulator or empty`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("-profile 80 -backend tc: %v, want an error saying %q", err, want)
		}
	}
}
