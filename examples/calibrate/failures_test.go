package main

import "testing"

func TestReportFailures(t *testing.T) {
	rep := Report{
		Results: []Result{
			{Profile: "80:10", Bulk: []Bulk{{CC: "bbr"}, {CC: "cubic"}}},
			{Profile: "80:10:1", Error: "echo: boom"},
			{Profile: "150:2", Bulk: []Bulk{{CC: "bbr", Error: "refused"}, {CC: "cubic"}}},
			{Profile: "20:100", Ping: &Probe{Error: "no echo request was answered"}},
			{Profile: "5:1000", Bare: &Probe{Error: "no link"}, Ping: &Probe{Answered: 200}},
		},
		Sweep: []Sweep{
			{RateMbit: 200},
			{RateMbit: 500, Cubic: Bulk{Error: "x"}},
			{RateMbit: 1000, Error: "no link"},
		},
		Iperf: []Iperf{{Label: "bare veth"}, {Label: "5:1000", Error: "iperf3 client: exit status 1"}},
	}
	failed, total := rep.failures()
	if total != 10 {
		t.Errorf("total %d, want 10", total)
	}
	want := "7 of 10 measurements failed (profile 80:10:1, profile 150:2, profile 20:100, profile 5:1000, sweep 500 Mbit/s, sweep 1000 Mbit/s, iperf3 5:1000)"
	if got := failureLine(failed, total); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if failed, total := (Report{Results: []Result{{Profile: "80:10"}}}).failures(); len(failed) != 0 || total != 1 {
		t.Errorf("a clean report: %v failed of %d", failed, total)
	}
}
