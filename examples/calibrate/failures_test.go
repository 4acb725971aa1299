package main

import "testing"

func TestReportFailures(t *testing.T) {
	rep := Report{
		Results: []Result{
			{Profile: "80:10", Bulk: []Bulk{{CC: "bbr"}, {CC: "cubic"}}},
			{Profile: "80:10:1", Error: "echo: boom"},
			{Profile: "150:2", Bulk: []Bulk{{CC: "bbr", Error: "refused"}, {CC: "cubic"}}},
		},
		Sweep: []Sweep{
			{RateMbit: 200},
			{RateMbit: 500, Cubic: Bulk{Error: "x"}},
			{RateMbit: 1000, Error: "no link"},
		},
	}
	failed, total := rep.failures()
	if total != 6 {
		t.Errorf("total %d, want 6", total)
	}
	want := "4 of 6 measurements failed (profile 80:10:1, profile 150:2, sweep 500 Mbit/s, sweep 1000 Mbit/s)"
	if got := failureLine(failed, total); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if failed, total := (Report{Results: []Result{{Profile: "80:10"}}}).failures(); len(failed) != 0 || total != 1 {
		t.Errorf("a clean report: %v failed of %d", failed, total)
	}
}
