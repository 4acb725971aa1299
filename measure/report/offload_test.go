package report_test

import (
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/results"
)

// linkLine is the summary's line that describes the link.
func linkLine(t *testing.T, md string) string {
	t.Helper()
	h := section(t, md, "## Host state and link")
	for l := range strings.Lines(h) {
		if strings.HasPrefix(l, "Link backend:") {
			return strings.TrimSpace(l)
		}
	}
	t.Fatalf("no link line in:\n%s", h)
	return ""
}

// TestKeptOffloadIsDescribed: the summary names a kept offload where it
// describes the link, and only then; on the emulator that is all (every
// wire segment was judged on its own, so the arms were shaped alike), on
// netem it also warns that kernel TCP's super-packets were judged whole.
func TestKeptOffloadIsDescribed(t *testing.T) {
	for _, c := range []struct {
		backend, offload string
		line             string // what the link line must hold; "" for no offload at all
		warn             bool
	}{
		{"emulator", "", "", false},
		{"netem", "", "", false},
		{"emulator", "keep", "; offload keep (the ends kept the kernel's offloads (TSO, GSO, checksum; GRO as the kernel sets it, off on a veth); the link judged every wire segment of a super-packet on its own)", false},
		{"netem", "keep", "; offload keep (the ends kept the kernel's offloads (TSO, GSO, checksum; GRO as the kernel sets it, off on a veth); netem judged each super-packet whole, see the warnings)", true},
	} {
		runs := loadSeed(t, func(runs []results.Run) {
			for i := range runs {
				runs[i].Link.Backend, runs[i].Link.Offload = c.backend, c.offload
			}
		})
		md := markdown(t, runs, report.Options{})
		line := linkLine(t, md)
		switch {
		case c.line == "" && strings.Contains(line, "offload"):
			t.Errorf("%s, wire-sized: the link line mentions offload: %s", c.backend, line)
		case c.line != "" && !strings.Contains(line, c.line):
			t.Errorf("%s, offload %s: link line %q lacks %q", c.backend, c.offload, line, c.line)
		}
		w := section(t, md, "## Warnings")
		want := "- **all runs** (backend): " + report.NetemKeepWarning
		if got := strings.Contains(w, want); got != c.warn {
			t.Errorf("%s, offload %q: warned about netem judging super-packets whole: %v, want %v:\n%s", c.backend, c.offload, got, c.warn, w)
		}
		if !c.warn && !strings.Contains(w, "None:") {
			t.Errorf("%s, offload %q: warnings where none were due:\n%s", c.backend, c.offload, w)
		}
	}
}
