package shapedlink

import (
	"testing"
	"time"
)

func TestRunningNetnsWork(t *testing.T) {
	for comm, want := range map[string]bool{
		"kworker/u8:3+netns\n":        true,
		"kworker/1:2+netns":           true,
		"kworker/u8:3-netns\n":        false, // finished its netns work
		"kworker/R-netns\n":           false, // the rescuer, always there
		"kworker/u8:3+events_unbound": false,
		"netns+netns":                 false,
		"":                            false,
	} {
		if got := runningNetnsWork([]byte(comm)); got != want {
			t.Errorf("runningNetnsWork(%q) = %v, want %v", comm, got, want)
		}
	}
}

// TestQuietWait drives the wait with a fake clock: one poll per
// millisecond, the worker running on the polls inside its spans.
func TestQuietWait(t *testing.T) {
	for _, c := range []struct {
		name  string
		spans [][2]int // [first, end) poll indices with the worker running
		want  time.Duration
	}{
		// Starts at 5 ms, runs until 25 ms: done 10 ms after it stops.
		{"starts late", [][2]int{{5, 25}}, 35 * time.Millisecond},
		// A gap shorter than the quiet time is one teardown.
		{"gap", [][2]int{{0, 10}, {14, 30}}, 40 * time.Millisecond},
		// A gap longer than the quiet time ends it at the end of the
		// quiet time, whatever comes later.
		{"two", [][2]int{{0, 10}, {21, 30}}, 20 * time.Millisecond},
		// Never starts: give up at the start bound.
		{"never", nil, 50 * time.Millisecond},
		// Never stops: give up at the limit.
		{"endless", [][2]int{{0, 1 << 30}}, 300 * time.Millisecond},
	} {
		var clock time.Time
		polls := 0
		running := func() bool {
			i := polls
			polls++
			for _, s := range c.spans {
				if i >= s[0] && i < s[1] {
					return true
				}
			}
			return false
		}
		w := quietWait{start: 50 * time.Millisecond, quiet: 10 * time.Millisecond, limit: 300 * time.Millisecond,
			poll: time.Millisecond, now: func() time.Time { return clock }, sleep: func(d time.Duration) { clock = clock.Add(d) }}
		if got := w.await(running); got != c.want {
			t.Errorf("%s: waited %v, want %v", c.name, got, c.want)
		}
	}
}

// BenchmarkNetnsTeardownRunning is the cost of one poll of the teardown
// wait (a scan of every task's name), which Close makes every 2 ms while
// it waits.
func BenchmarkNetnsTeardownRunning(b *testing.B) {
	for b.Loop() {
		netnsTeardownRunning()
	}
}
