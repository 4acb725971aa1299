package emulator

import (
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkmodel"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// heldFrames is a linkmodel.Frames for frames that are never copied or
// refused.
type heldFrames struct{}

func (heldFrames) Copy(ref int64, _ int) int64                 { return ref }
func (heldFrames) Release(int64)                               {}
func (heldFrames) Classify(int64, int) (flow uint32, ect bool) { return 0, false }

// TestBusy: the loop spins towards a frame only when the frame met no
// queue and the next frame is not due right after it. Sparse frames over
// a long delay (many held, each alone on the wire) are not busy, which
// the old rule (more than four held) got wrong.
func TestBusy(t *testing.T) {
	const ms = int64(time.Millisecond)
	// line holds frames due at dues (no delay and no rate: each is due
	// when it arrives), after skip frames that came and went, in a line
	// of room for 8, so that skip 7 puts the head last in the ring.
	line := func(skip int, dues ...int64) *dirLoop {
		l := &dirLoop{}
		l.carry = linkmodel.NewCarrier(linkmodel.New(linkspec.Direction{Limit: 100}, nil), 8, heldFrames{})
		for range skip {
			l.carry.Judge(0, 0, 100)
			l.carry.Depart()
		}
		for _, d := range dues {
			l.carry.Judge(d, 0, 100)
		}
		return l
	}
	// queued is one frame left that waited behind another for the rate.
	queued := func() *dirLoop {
		l := &dirLoop{}
		l.carry = linkmodel.NewCarrier(linkmodel.New(linkspec.Direction{RateMbit: 10, Limit: 100}, nil), 8, heldFrames{})
		l.carry.Judge(0, 0, 1514)
		l.carry.Judge(0, 1, 1514)
		l.carry.Depart()
		return l
	}
	cases := []struct {
		name string
		l    *dirLoop
		want bool
	}{
		{"one frame", line(0, 10*ms), false},
		{"one queued frame", queued(), true},
		{"eight sparse frames 10 ms apart", line(0, 10*ms, 20*ms, 30*ms, 40*ms, 50*ms, 60*ms, 70*ms, 80*ms), false},
		{"next due 10 us later", line(0, 10*ms, 10*ms+10_000), true},
		{"next due exactly a quantum later", line(0, 10*ms, 10*ms+busyQuantum), false},
		{"wrapping: head last in the ring, next due 1 us later", line(7, 10*ms, 10*ms+1000), true},
		{"wrapping: head last in the ring, next sparse", line(7, 10*ms, 20*ms), false},
	}
	for _, c := range cases {
		if got := c.l.busy(); got != c.want {
			t.Errorf("%s: busy() = %v, want %v", c.name, got, c.want)
		}
	}
}
