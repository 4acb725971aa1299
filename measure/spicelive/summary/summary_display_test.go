package summary

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/spicelive"
	"github.com/shakenfist/quicbench/measure/spicelive/xsession"
	"github.com/shakenfist/quicbench/stats"
)

// writeDisplayRuns writes live runs of arm with the given display
// throughputs, each with keys samples after a 1 s warm-up.
func writeDisplayRuns(t *testing.T, c spicelive.Config, reading string, arm measure.Arm, cell results.Cell, base time.Duration, keys int, mbit ...float64) {
	t.Helper()
	for i, m := range mbit {
		r := fakeRun(cell, arm, i+1, base)
		r.Samples = nil
		for k := range keys {
			r.Samples = append(r.Samples, stats.Sample{Offset: time.Second + time.Duration(k)*500*time.Millisecond, RTT: base + time.Duration(k%20)*time.Millisecond})
		}
		r.ThroughputMbit = m
		if err := results.WriteJSON(filepath.Join(results.RunDir(c.ReadingDir(reading), cell, string(arm), i+1), results.RunFile), r); err != nil {
			t.Fatal(err)
		}
	}
}

// With a workload the summary lists each live run's display against the
// link and beside the synthetic reading's bulk rate for the same arm and
// cell, marks the runs that did not saturate it (putting each down to the
// transport or the workload by that rate, or saying it is absent) or timed
// too few keys, and names the first beside the live verdict; without one
// it says nothing of the kind.
func TestSummaryMarksRunsThatDidNotSaturate(t *testing.T) {
	c := displayConfig(xsession.DisplayVideo)
	c.Workdir, c.Readings, c.Arms, c.Repeats, c.Warmup = t.TempDir(), []string{spicelive.ReadingLive, spicelive.ReadingSynthetic}, []measure.Arm{measure.TCP, measure.QUIC}, 2, time.Second
	cell, _, _ := cellOf(c, "80:10:1")
	cell.CC = "reno"
	writeDisplayRuns(t, c, spicelive.ReadingLive, measure.TCP, cell, ms(900), 120, 9.1, 7.0)
	writeDisplayRuns(t, c, spicelive.ReadingLive, measure.QUIC, cell, ms(1900), 120, 6.9, 8.2)
	writeDisplayRuns(t, c, spicelive.ReadingSynthetic, measure.TCP, cell, ms(200), 50, 2.5, 2.7)
	var out bytes.Buffer
	if err := Summarise(&out, c); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"Display workload: video, a 520x560 window at 25 frames a second.",
		"the synthetic reading's bulk rate for the same arm, cell and loss, the transport's own ceiling on that link",
		"| live | quic against tcp | +1000.0 |",
		"Did not saturate: quic r1 (6.90 Mbit/s).",
		"| tcp | r1 | 9.10 | 91% | 2.60 | 120 |  |",
		"| tcp | r2 | 7.00 | 70% | 2.60 | 120 |  |",
		"| quic | r1 | 6.90 | 69% | none: no synthetic reading of this arm in this cell | 120 | did not saturate; no synthetic reading to tell the transport's limit from the workload's |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the summary lacks %q:\n%s", want, s)
		}
	}
	// Under loss the transport's own ceiling decides: quic's synthetic
	// bulk at 7 Mbit/s puts a 6.9 display down to the transport, at 10
	// to the workload.
	for _, tc := range []struct {
		ceiling float64
		want    string
	}{
		{7, "| quic | r1 | 6.90 | 69% | 7.00 | 120 | did not saturate: the transport's limit (99% of its synthetic 7.00) |"},
		{10, "| quic | r1 | 6.90 | 69% | 10.00 | 120 | did not saturate: the workload's limit (69% of the transport's synthetic 10.00) |"},
	} {
		ceiling, want := tc.ceiling, tc.want
		writeDisplayRuns(t, c, spicelive.ReadingSynthetic, measure.QUIC, cell, ms(200), 50, ceiling, ceiling)
		out.Reset()
		if err := Summarise(&out, c); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), want) {
			t.Errorf("the summary lacks %q:\n%s", want, out.String())
		}
	}
	writeDisplayRuns(t, c, spicelive.ReadingLive, measure.QUIC, cell, ms(1900), 80, 8.2)
	out.Reset()
	if err := Summarise(&out, c); err != nil {
		t.Fatal(err)
	}
	if want := "| quic | r1 | 8.20 | 82% | 10.00 | 80 | fewer than 100 timed keys |"; !strings.Contains(out.String(), want) {
		t.Errorf("the summary lacks %q:\n%s", want, out.String())
	}
	c.Display, c.DisplayWidth, c.DisplayHeight, c.FrameRate, c.KeyTimeout = xsession.DisplayNone, 0, 0, 0, 0
	out.Reset()
	if err := Summarise(&out, c); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); strings.Contains(s, "saturate") || strings.Contains(s, "Display workload") {
		t.Errorf("a summary without a workload speaks of one:\n%s", s)
	}
}
