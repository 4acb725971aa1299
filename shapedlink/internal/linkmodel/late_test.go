package linkmodel

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// lateCarrier judges arrivals the way a forwarding thread that is
// descheduled does: before it judges a frame arriving at at, it has
// already sent every held frame due by at plus a lag (the time it was
// away), as a thread that wakes late, sends what is due and only then
// reads its socket would. It returns the frames in the order they left.
func lateCarrier(t *testing.T, d Direction, arrivals []int64, sizes []int, lag func(i int) int64) []Held {
	t.Helper()
	var c linkspec.Counters
	m := New(d, &c)
	car := NewCarrier(m, d.MaxHeld(), &recFrames{log: new(strings.Builder)})
	var out []Held
	for i, at := range arrivals {
		now := at + lag(i)
		for car.Line.Len() > 0 && car.Line.At(0).Due <= now {
			out = append(out, car.Depart())
		}
		car.Judge(at, int64(i), sizes[i])
	}
	for car.Line.Len() > 0 {
		out = append(out, car.Depart())
	}
	return out
}

// TestRateHeldInModelTime: a frame that arrived while the one before it
// was still on the link, in the model's time, waits for it, even when the
// carrier has already sent that one (it judged the later arrival late).
// A link never carries more than its rate: each frame leaves at least its
// own serialisation after the one before it, and never before its arrival
// plus the delay and its serialisation.
func TestRateHeldInModelTime(t *testing.T) {
	d := Direction{Delay: 10 * time.Millisecond, RateMbit: 10, Limit: 1000}
	m := New(d, new(linkspec.Counters))
	rng := rand.New(rand.NewPCG(1, 2))
	var arrivals []int64
	var sizes []int
	at := int64(0)
	for i := range 400 {
		// Bursts faster than the rate, with idle gaps between them.
		if i%20 == 0 {
			at += int64(rng.IntN(30)) * int64(time.Millisecond)
		}
		at += int64(rng.IntN(200)) * int64(time.Microsecond)
		arrivals = append(arrivals, at)
		sizes = append(sizes, 64+rng.IntN(1451))
	}
	for name, lag := range map[string]func(int) int64{
		"on time":     func(int) int64 { return 0 },
		"descheduled": func(i int) int64 { return int64(rng.IntN(25)) * int64(time.Millisecond) },
	} {
		out := lateCarrier(t, d, arrivals, sizes, lag)
		if len(out) != len(arrivals) {
			t.Fatalf("%s: %d frames left, want %d", name, len(out), len(arrivals))
		}
		for k, h := range out {
			i := int(h.Ref)
			if idle := arrivals[i] + int64(d.Delay) + m.txTime(sizes[i]); h.Due < idle {
				t.Errorf("%s: frame %d due %v after its arrival, before the delay and its serialisation (%v)", name, i, time.Duration(h.Due-arrivals[i]), time.Duration(idle-arrivals[i]))
			}
			if h.Due-h.Ahead != arrivals[i]+int64(d.Delay)+m.txTime(sizes[i]) {
				t.Errorf("%s: frame %d: due less Ahead is %d, want its due on an idle link %d", name, i, h.Due-h.Ahead, arrivals[i]+int64(d.Delay)+m.txTime(sizes[i]))
			}
			if k == 0 {
				continue
			}
			if gap, tx := h.Due-out[k-1].Due, m.txTime(sizes[i]); gap < tx {
				t.Errorf("%s: frame %d due %v after the one before it, less than its serialisation %v: the link carried more than its rate", name, i, time.Duration(gap), time.Duration(tx))
			}
		}
	}
}
