package emulator

import (
	"testing"
	"time"
)

// TestBusy: the loop spins towards a frame only when the frame met no
// queue and the next frame is not due right after it. Sparse frames over
// a long delay (many held, each alone on the wire) are not busy, which
// the old rule (more than four held) got wrong.
func TestBusy(t *testing.T) {
	const ms = int64(time.Millisecond)
	ring := func(head int, dues []int64, queued ...bool) *dirLoop {
		l := &dirLoop{ring: make([]entry, 8), head: head, n: len(dues)}
		for i, d := range dues {
			e := entry{due: d}
			if i < len(queued) {
				e.queued = queued[i]
			}
			l.ring[(head+i)%len(l.ring)] = e
		}
		return l
	}
	cases := []struct {
		name string
		l    *dirLoop
		want bool
	}{
		{"one frame", ring(0, []int64{10 * ms}), false},
		{"one queued frame", ring(0, []int64{10 * ms}, true), true},
		{"eight sparse frames 10 ms apart", ring(0, []int64{10 * ms, 20 * ms, 30 * ms, 40 * ms, 50 * ms, 60 * ms, 70 * ms, 80 * ms}), false},
		{"next due 10 us later", ring(0, []int64{10 * ms, 10*ms + 10_000}), true},
		{"next due exactly a quantum later", ring(0, []int64{10 * ms, 10*ms + busyQuantum}), false},
		{"wrapping: head last in the ring, next due 1 us later", ring(7, []int64{10 * ms, 10*ms + 1000}), true},
		{"wrapping: head last in the ring, next sparse", ring(7, []int64{10 * ms, 20 * ms}), false},
	}
	for _, c := range cases {
		if got := c.l.busy(); got != c.want {
			t.Errorf("%s: busy() = %v, want %v", c.name, got, c.want)
		}
	}
}
