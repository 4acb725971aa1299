package shapedlink

import (
	"fmt"
	"testing"
	"time"
)

// decisionErrors checks a keep-awake decision rule against the limits:
// off at and below both, on above either.
func decisionErrors(decide func(p99, max time.Duration) bool) []string {
	us := time.Microsecond
	var errs []string
	for _, c := range []struct {
		p99, max time.Duration
		want     bool
	}{
		{10 * us, 50 * us, false},
		{wakeLimitP99, wakeLimitMax, false},
		{wakeLimitP99 + us, wakeLimitP99 + us, true},
		{50 * us, wakeLimitMax + us, true},
		{7 * time.Millisecond, 8 * time.Millisecond, true},
	} {
		if got := decide(c.p99, c.max); got != c.want {
			errs = append(errs, fmt.Sprintf("p99 %v max %v: keep awake %v, want %v", c.p99, c.max, got, c.want))
		}
	}
	return errs
}

// TestKeepAwakeDecision: keep-awake is on exactly when a wake-up
// lateness figure is above its limit; a rule with the comparison
// inverted is caught.
func TestKeepAwakeDecision(t *testing.T) {
	for _, e := range decisionErrors(keepAwakeFor) {
		t.Error(e)
	}
	inverted := func(p99, max time.Duration) bool { return p99 < wakeLimitP99 || max < wakeLimitMax }
	if len(decisionErrors(inverted)) == 0 {
		t.Error("a decision with its comparison inverted passed the check")
	}
}

// TestNewWakeProbe: the summary's quantiles and limits are read from the
// lateness given, and the decision follows them.
func TestNewWakeProbe(t *testing.T) {
	late := make([]time.Duration, 200)
	for i := range late {
		late[i] = time.Duration(len(late)-i) * time.Microsecond // 200 us down to 1 us
	}
	p := newWakeProbe(late, time.Millisecond, "SCHED_FIFO 1", 300*time.Millisecond)
	if p.Sleeps != 200 || p.SleepUs != 1000 || p.P50Ms != 0.101 || p.P99Ms != 0.199 || p.MaxMs != 0.2 || p.LimitP99Ms != 0.2 || p.LimitMaxMs != 2 || p.KeepAwake || p.TookMs != 300 {
		t.Errorf("summary %+v", p)
	}
	late[0] = 3 * time.Millisecond
	if p := newWakeProbe(late, time.Millisecond, "", 0); !p.KeepAwake || p.MaxMs != 3 {
		t.Errorf("one wake-up 3 ms late: %+v; want keep-awake on", p)
	}
}
