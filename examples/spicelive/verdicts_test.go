package main

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// TestVerdictsFlag prints a committed samples directory's verdicts, and
// refuses -verdicts beside another mode or a run's flags.
func TestVerdictsFlag(t *testing.T) {
	var out, errs bytes.Buffer
	if code := mainCode([]string{"-verdicts", "../../docs/results/spicelive-pilot-matched"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	if !strings.Contains(out.String(), "| quic against tcp | -621.5 | 2042.8 | unresolved |") {
		t.Errorf("no quic against tcp verdict in:\n%s", out.String())
	}
	for _, args := range [][]string{{"-verdicts", "x", "-summary"}, {"-verdicts", "x", "-repeats", "3"}} {
		if _, _, err := parseFlags(args, io.Discard, func(string) string { return "" }); err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
	if code := mainCode([]string{"-verdicts", t.TempDir()}, io.Discard, io.Discard); code == 0 {
		t.Error("-verdicts on a directory with no samples: exit 0")
	}
}
