package spicelive

import (
	"flag"
	"slices"
	"strings"
	"testing"
)

// A recording's source names the command without its work directory.
func TestWithoutWorkdir(t *testing.T) {
	if got := withoutWorkdir([]string{"-record", "video", "-workdir", "x", "--workdir=y", "-duration", "40"}); !slices.Equal(got, []string{"-record", "video", "-duration", "40"}) {
		t.Errorf("withoutWorkdir: %q", got)
	}
}

// TestUnusedFlagsOneMode: -summary, -samples and -verdicts exclude each
// other; one alone is taken.
func TestUnusedFlagsOneMode(t *testing.T) {
	for _, tc := range []struct {
		args []string
		bad  bool
	}{
		{[]string{"-summary"}, false},
		{[]string{"-samples", "s"}, false},
		{[]string{"-summary=false", "-samples", "s"}, false},
		{[]string{"-summary", "-samples", "s"}, true},
		{[]string{"-samples", "s", "-verdicts", "v"}, true},
	} {
		fs := flag.NewFlagSet("spicelive", flag.ContinueOnError)
		summary := fs.Bool("summary", false, "")
		samples := fs.String("samples", "", "")
		verdicts := fs.String("verdicts", "", "")
		fs.String("workdir", "", "")
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		errs := UnusedFlags(fs, *summary || *samples != "" || *verdicts != "", false, ReadingLive)
		if got := slices.ContainsFunc(errs, func(err error) bool { return strings.Contains(err.Error(), "give one") }); got != tc.bad {
			t.Errorf("%q: %v, want refused %v", tc.args, errs, tc.bad)
		}
	}
}

// TestControlLists: the control runs its own lists, and what was given
// for them is checked all the same.
func TestControlLists(t *testing.T) {
	losses, arms, readings := "1", "tcp quic", "live synthetic"
	if err := ControlLists(&losses, &arms, &readings); err != nil || losses != "0" || arms != "tcp" || readings != ReadingLive {
		t.Errorf("ControlLists: %v, lists %q %q %q", err, losses, arms, readings)
	}
	losses, arms, readings = "lots", "tcp", "live"
	if err := ControlLists(&losses, &arms, &readings); err == nil {
		t.Error("a loss that is not a number passed")
	}
}
