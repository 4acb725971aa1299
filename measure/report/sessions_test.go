package report_test

import (
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/report/reporttest"
	"github.com/shakenfist/quicbench/measure/results"
)

// sessionsRuns is a cell of two sessions sharing 80 ms / 10 Mbit at 1%
// loss, five repeats. Within a repeat both sessions have the same round
// trips, so the all-session p95 equals each session's; tcp splits the link
// 4:4 every repeat, quic 6:2 in four repeats and 4:4 in the fifth.
func sessionsRuns() []results.Run {
	c := results.Cell{Profile: "80:10", RTTms: 80, RateMbit: 10, LossPct: 1, CC: "reno", Sessions: 2}
	tcpP95 := []float64{100, 101, 102, 103, 104}
	quicP95 := []float64{150, 150, 151, 152, 160}
	runs := reporttest.Cell(c,
		reporttest.ArmSpec{Arm: "tcp", P50: 80, P99: 300, RepeatP95: tcpP95, N: 200, Mbit: 4, ConnectMs: 80},
		reporttest.ArmSpec{Arm: "quic", P50: 95, P99: 300, RepeatP95: quicP95, N: 200, Mbit: 6, ConnectMs: 80},
	)
	for i := range runs {
		r := &runs[i]
		rep := r.Repeat - 1
		p95, tput := tcpP95[rep], []float64{4, 4}
		p50 := 80.0
		if r.Arm == "quic" {
			p95, p50, tput = quicP95[rep], 95, []float64{6, 2}
			if rep == 4 {
				tput = []float64{4, 4}
			}
		}
		for k := range 2 {
			r.Sessions = append(r.Sessions, results.SessionResult{
				Index: k, Samples: reporttest.Repeat(p50, p95, 300, 200), ThroughputMbit: tput[k],
			})
		}
		r.Samples, r.ThroughputMbit = r.Sessions[0].Samples, tput[0]
	}
	return runs
}

func TestSessionsSection(t *testing.T) {
	runs := sessionsRuns()
	md := markdown(t, runs, report.Options{Source: "sessions"})
	sec := section(t, md, "## Sessions sharing one bottleneck")
	for _, want := range []string{
		// All-session p95 102 (spread 4) and 151 (spread 10); Jain per
		// repeat: tcp always 1, quic 0.8 four times and 1 once.
		"| 80 ms / 10 Mbit, 2 sessions | 1% | tcp | 102.0 | 4.0 | 100.0-104.0 | 102.0 (102.0-102.0) | 1.000 (1.000-1.000) | 8.00 (8.00-8.00) | 0 | 5/5 |",
		"| 80 ms / 10 Mbit, 2 sessions | 1% | quic | 151.0 | 10.0 | 150.0-160.0 | 151.0 (151.0-151.0) | 0.800 (0.800-1.000) | 8.00 (8.00-8.00) | 0 | 5/5 |",
		"| 80 ms / 10 Mbit, 2 sessions | 1% | quic against tcp | +49.0 | 10.0 | QUIC worse |",
		// Per session: quic session 1 got 2 Mbit/s in four repeats of five.
		"| 80 ms / 10 Mbit, 2 sessions | 1% | quic | 1 | 95.0 | 151.0 | 300.0 | 10.0 | 150.0-160.0 | 2.00 (2.00-4.00) | 0 | 5/5 |",
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("sessions section lacks\n%s\nin:\n%s", want, sec)
		}
	}
	if !strings.Contains(md, "These rows are session 0's alone, one of 2 sharing the link") {
		t.Error("the per-profile table does not say it shows session 0 only")
	}

	// A run that failed takes no part in the figures or Jain's index.
	runs = sessionsRuns()
	for i := range runs {
		if runs[i].Arm == "quic" && runs[i].Repeat == 5 {
			runs[i].Failed = "server did not start"
		}
	}
	rep, err := report.Build(runs, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q := rep.Cells[0].Sessions.Arm("quic")
	if q.Measured != 4 || q.Jain == nil || q.Jain.Max != 0.8 || len(q.RepeatJain) != 4 {
		t.Errorf("failed repeat counted: measured %d, jain %+v %v", q.Measured, q.Jain, q.RepeatJain)
	}

	// Cells without sessions have no such section.
	if md := markdown(t, reporttest.Seed(), report.Options{}); strings.Contains(md, "Sessions sharing") {
		t.Error("sessions section printed for single-session runs")
	}
}

func TestCappedSection(t *testing.T) {
	cell := func(capf float64) results.Cell {
		c := results.Cell{Profile: "80:10", RTTms: 80, RateMbit: 10, LossPct: 1, CC: "reno", BulkCapFraction: capf}
		c.BulkRateCapBps = int64(capf * 10e6)
		return c
	}
	var runs []results.Run
	runs = append(runs, reporttest.Cell(cell(0),
		reporttest.ArmSpec{Arm: "tcp", P50: 80, P99: 300, RepeatP95: []float64{82, 82, 83, 83, 84}, N: 300, Mbit: 1.6},
		reporttest.ArmSpec{Arm: "quic", P50: 100, P99: 300, RepeatP95: []float64{140, 142, 144, 145, 146}, N: 300, Mbit: 1.5},
	)...)
	runs = append(runs, reporttest.Cell(cell(0.5),
		reporttest.ArmSpec{Arm: "tcp", P50: 80, P99: 300, RepeatP95: []float64{82, 82, 83, 83, 84}, N: 300, Mbit: 1.6},
		reporttest.ArmSpec{Arm: "quic", P50: 82, P99: 300, RepeatP95: []float64{84, 85, 85, 86, 90}, N: 300, Mbit: 1.5},
	)...)
	md := markdown(t, runs, report.Options{})
	sec := section(t, md, "## Display capped below the link rate")
	for _, want := range []string{
		"| 80 ms / 10 Mbit | 1% | reno | uncapped | 83.0 | 2.0 | 144.0 | 6.0 | +61.0 | 6.0 | QUIC worse | 1.60 | 1.50 |",
		"| 80 ms / 10 Mbit | 1% | reno | 50% (5 Mbit/s) | 83.0 | 2.0 | 85.0 | 6.0 | +2.0 | 6.0 | unresolved | 1.60 | 1.50 |",
	} {
		if !strings.Contains(sec, want) {
			t.Errorf("capped section lacks\n%s\nin:\n%s", want, sec)
		}
	}
	// The headline reading table labels the capped cell with its cap.
	if !strings.Contains(md, "| 80 ms / 10 Mbit, display capped at 50% (5 Mbit/s) | 1% | +2.0 | 6.0 | unresolved |") {
		t.Errorf("reading table does not label the capped cell:\n%s", md)
	}
	if !strings.Contains(md, "### 80 ms / 10 Mbit, display capped at 50% (5 Mbit/s)") {
		t.Error("capped cell has no table of its own")
	}
}

func TestSessionsTimeoutWarned(t *testing.T) {
	runs := sessionsRuns()
	for i := range runs {
		if runs[i].Arm == "tcp" && runs[i].Repeat == 2 {
			runs[i].Sessions[1].Timeouts = 1 // not session 0: the headline tables cannot see it
		}
	}
	rep, err := report.Build(runs, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range rep.Warnings {
		if w.Kind == report.WarnTimeout && w.Arm == "tcp" && strings.Contains(w.Detail, "across the 2 sessions") {
			found = true
		}
	}
	if !found {
		t.Errorf("a timeout in session 1 was not warned about: %+v", rep.Warnings)
	}
}
