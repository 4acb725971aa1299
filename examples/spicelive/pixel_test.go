package main

import (
	"io"
	"strings"
	"testing"
)

// -pixel turns key-to-pixel on for the live reading (the control's
// included), and is refused where no live run would use it.
func TestPixelFlag(t *testing.T) {
	for _, args := range [][]string{{"-pixel"}, {"-control", "-pixel"}} {
		c, _, err := parseFlags(args, io.Discard, noEnv)
		if err != nil || !c.Pixel {
			t.Errorf("%q: pixel %v, %v", args, c.Pixel, err)
		}
	}
	if c, _, _ := parseFlags(nil, io.Discard, noEnv); c.Pixel {
		t.Error("key-to-pixel is on by default")
	}
	_, _, err := parseFlags([]string{"-readings", "replay synthetic", "-pixel"}, io.Discard, noEnv)
	if err == nil || !strings.Contains(err.Error(), "-pixel times the live reading's keys") {
		t.Errorf("-pixel without the live reading: %v", err)
	}
}
