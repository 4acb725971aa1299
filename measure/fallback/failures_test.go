package fallback

import "testing"

func TestFailureLine(t *testing.T) {
	recs := []Record{
		{Profile: "80:10", Arm: armTCP, Connects: 3, Results: []Connect{{}, {}, {}}},
		{Profile: "80:10", Arm: armFallbackOpen, Connects: 3, Failed: "building the link: boom"},
		{Profile: "80:10", Arm: armFallbackBlocked, Connects: 3, Results: []Connect{{}, {Err: "dial: timeout"}, {}}},
	}
	want := "4 of 9 measurements (connects) failed (80:10 fallback-open: arm failed; 80:10 fallback-blocked: 1 of 3 connects)"
	if got := Failures(recs); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if got := Failures(recs[:1]); got != "" {
		t.Errorf("no failures: got %q, want \"\"", got)
	}
}
