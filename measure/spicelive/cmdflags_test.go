package spicelive

import (
	"slices"
	"testing"
)

// A recording's source names the command without its work directory.
func TestWithoutWorkdir(t *testing.T) {
	if got := withoutWorkdir([]string{"-record", "video", "-workdir", "x", "--workdir=y", "-duration", "40"}); !slices.Equal(got, []string{"-record", "video", "-duration", "40"}) {
		t.Errorf("withoutWorkdir: %q", got)
	}
}
