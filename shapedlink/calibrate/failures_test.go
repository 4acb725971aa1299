package calibrate

import (
	"strings"
	"testing"
)

func TestReportFailures(t *testing.T) {
	rep := Report{
		Results: []Result{
			{Profile: "80:10", Bulk: []Bulk{{CC: "bbr"}, {CC: "cubic"}}},
			{Profile: "80:10:1", Error: "echo: boom"},
			{Profile: "150:2", Bulk: []Bulk{{CC: "bbr", Error: "refused"}, {CC: "cubic"}}},
			{Profile: "20:100", Ping: &Probe{Error: "no echo request was answered"}},
			{Profile: "5:1000", Bare: &Probe{Error: "no link"}, Ping: &Probe{Answered: 200}},
			{Profile: "80:10,trace", LateTrace: &LateTrace{Error: "trace: writing the trigger: file exists"}},
			{Profile: "80:10,caught", LateTrace: &LateTrace{Caught: true}},
		},
		Sweep: []Sweep{
			{RateMbit: 200},
			{RateMbit: 500, Cubic: Bulk{Error: "x"}},
			{RateMbit: 1000, Error: "no link"},
		},
		Iperf: []Iperf{{Label: "bare veth"}, {Label: "5:1000", Error: "iperf3 client: exit status 1"}},
		Qdisc: []Qdisc{{Discipline: "fifo"}, {Discipline: "fq_codel", Error: "netem refuses it"}},
	}
	failed, total := rep.Failures()
	if total != 14 {
		t.Errorf("total %d, want 14", total)
	}
	want := "9 of 14 measurements failed (profile 80:10:1, profile 150:2, profile 20:100, profile 5:1000, profile 80:10,trace, sweep 500 Mbit/s, sweep 1000 Mbit/s, iperf3 5:1000, qdisc fq_codel)"
	if got := FailureLine(failed, total); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if failed, total := (Report{Results: []Result{{Profile: "80:10"}}}).Failures(); len(failed) != 0 || total != 1 {
		t.Errorf("a clean report: %v failed of %d", failed, total)
	}
}

// TestPrintQdisc: the discipline table shows each measured row and names
// a failed one with its reason.
func TestPrintQdisc(t *testing.T) {
	var b strings.Builder
	printQdisc(&b, []Qdisc{
		{Discipline: "codel", Profile: "80:10,qdisc=codel", FlowMbit: 9.1, StandingP50Ms: 4.2, StandingP95Ms: 11, SparseP50Ms: 4.5, SparseP95Ms: 12, Echoes: 500, EchoesSent: 500, CoDelDrops: 7},
		{Discipline: "fq_codel", Profile: "80:10,qdisc=fq_codel", Error: "netem refuses it"},
	})
	for _, want := range []string{"80:10,qdisc=codel", "9.10", "4.200", "12.000", "500/500", "0/0/7", "qdisc fq_codel: netem refuses it"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}
