package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/measure/simcheck"
)

// Every flag is checked whatever the mode, numbers within bounds, and a
// flag the mode does not use is refused by name.
func TestFlagsSayWhatIsWrong(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-headline", "-duration", "100000h"}, "-duration 100000h0m0s: give at most 10m0s"},
		{[]string{"-headline", "-duration", "10s", "-warmup", "10s"}, "-duration 10s, -warmup 10s"},
		{[]string{"-headline", "-repeats", "1000000"}, "-repeats 1000000: give 2 to 100"},
		{[]string{"-headline", "-headline-profile", "fast"}, "-headline-profile"},
		{[]string{"-bulk", "100000h"}, "-bulk 100000h0m0s"},
		{[]string{"-bulk", "1ns", "-bulk-warmup", "0"}, "-bulk 1ns"},
		{[]string{"-echoes", "1000000000"}, "-echoes 1000000000"},
		{[]string{"-echoes", "100000", "-echo-gap", "1s"}, "no more than 1h0m0s of gaps"},
		{[]string{"-datagrams", "2000000"}, "-datagrams 2000000"},
		{[]string{"-spacing", "0s"}, "-spacing 0s"},
		{[]string{"-packet", "9000"}, "-packet 9000"},
		// Checked even where unused, and refused as unused.
		{[]string{"-duration", "100000h"}, "-duration 100000h0m0s: give at most"},
		{[]string{"-duration", "100000h"}, "-duration is used by -headline only"},
		{[]string{"-repeats", "3"}, "-repeats is used by -headline only"},
		{[]string{"-headline", "-profile", "80:10"}, "-profile is not used by -headline"},
		{[]string{"-headline", "-emulator=false"}, "-emulator is not used by -headline"},
		// Every problem, not the first only.
		{[]string{"-packet", "9000", "-spacing", "0s"}, "-spacing 0s"},
	} {
		_, err := parseFlags(tc.args)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error saying %q", tc.args, err, tc.want)
		}
	}
	for _, ok := range [][]string{nil, {"-headline"}, {"-headline", "-duration", "10m", "-repeats", "2", "-seed", "3", "-packet", "1200"},
		{"-profile", "80:10", "-bulk", "1s", "-bulk-warmup", "0", "-emulator=false", "-seed", "2"}} {
		if _, err := parseFlags(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

// TestProfileFlag: -profile is linkflag's repeatable one: the profiles
// given replace the default list, each once, and a bad one is refused
// naming the flag, with the command's other errors; -seed defaults to 1.
func TestProfileFlag(t *testing.T) {
	f, err := parseFlags(nil)
	if err != nil || !slices.Equal(f.profiles, simcheck.DefaultProfiles()) || f.seed != 1 {
		t.Errorf("defaults: %v seed %d, %v; want %v seed 1", f.profiles, f.seed, err, simcheck.DefaultProfiles())
	}
	f, err = parseFlags([]string{"-profile", "20:5", "-profile", "80:10,jitter=5/normal", "-seed", "4"})
	if err != nil || !slices.Equal(f.profiles, []string{"20:5", "80:10,jitter=5/normal"}) || f.seed != 4 {
		t.Errorf("two profiles and -seed 4: %v seed %d, %v", f.profiles, f.seed, err)
	}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"-profile", "80"}, []string{`-profile: shapedlink: profile "80"`}},
		{[]string{"-profile", "80:10", "-profile", "80:10.0"}, []string{"-profile: profile 80:10 is given twice"}},
		{[]string{"-profile", "80:10 150:2", "-packet", "9000"}, []string{"-profile: ", "-packet 9000"}},
	} {
		_, err := parseFlags(tc.args)
		for _, want := range tc.want {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%q: %v, want an error saying %q", tc.args, err, want)
			}
		}
	}
}
