package pathchange

import (
	"testing"

	"github.com/shakenfist/quicbench/measure/results"
)

func TestFailureLine(t *testing.T) {
	recs := []Record{
		{Cell: results.Cell{LossPct: 0}, Arm: "tcp", Repeat: 1},
		{Cell: results.Cell{LossPct: 1}, Arm: "quic", Repeat: 2, Failed: "building the link: boom"},
		{Cell: results.Cell{LossPct: 0}, Arm: "quic", Repeat: 1},
	}
	want := "1 of 3 measurements failed (loss 1% quic r2)"
	if got := Failures(recs); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if got := Failures(recs[:1]); got != "" {
		t.Errorf("no failures: got %q, want \"\"", got)
	}
}
