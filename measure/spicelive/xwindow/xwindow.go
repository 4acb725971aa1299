package xwindow

import (
	"errors"
	"math"
	"sync"
	"time"

	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// Damage is a damage event of a watched window, as it arrived: its time,
// the rectangle damaged, or the error that ended the watch.
type Damage struct {
	T    time.Duration
	Area spicetrace.Rect
	Err  error
}

// Queue hands damage events from the goroutine that times them as they
// arrive to the one that reads the window back. Put never blocks: were it
// to, the connection's reader would stop too, and with it the replies the
// reader waits for.
type Queue struct {
	mu     sync.Mutex
	items  []Damage
	closed bool
	ready  chan struct{} // a token when items or closed changed
}

// NewQueue returns an empty queue.
func NewQueue() *Queue { return &Queue{ready: make(chan struct{}, 1)} }

// Put adds d, or with closing marks the queue closed.
func (q *Queue) Put(d Damage, closing bool) {
	q.mu.Lock()
	if closing {
		q.closed = true
	} else {
		q.items = append(q.items, d)
	}
	q.mu.Unlock()
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// Take returns the waiting events, waiting for some; none once the queue
// is closed and empty.
func (q *Queue) Take() []Damage {
	for {
		q.mu.Lock()
		items, closed := q.items, q.closed
		q.items = nil
		q.mu.Unlock()
		if len(items) > 0 || closed {
			return items
		}
		<-q.ready
	}
}

// errNoArea says the typing xterm was not found in spicy's window.
var errNoArea = errors.New("the typing xterm (a white area) was not found in spicy's window")

// FindArea finds the typing xterm in an image of spicy's window, w by h
// pixels, of which white says whether a pixel is pure white. The topmost,
// then leftmost, run of at least minRun white pixels across is taken to
// be in the xterm's white area; the area's top and bottom are where the
// run's middle column stops being white, and its left and right where its
// middle row does, so that the text cursor at its top left does not cut
// it short. The xterm is at the top left of the guest's screen and is
// white; spicy's own parts are never pure white over such a run.
func FindArea(w, h int, white func(x, y int) bool) (spicetrace.Rect, error) {
	const minRun = 40
	for y := 0; y < h; y++ {
		for x := 0; x < w; {
			if !white(x, y) {
				x++
				continue
			}
			end := x
			for end < w && white(end, y) {
				end++
			}
			if end-x < minRun {
				x = end
				continue
			}
			midX := (x + end) / 2
			top, bottom := y, y
			for top > 0 && white(midX, top-1) {
				top--
			}
			for bottom < h && white(midX, bottom) {
				bottom++
			}
			if bottom-top < minRun/2 {
				x = end
				continue
			}
			midY := (top + bottom) / 2
			left, right := midX, midX
			for left > 0 && white(left-1, midY) {
				left--
			}
			for right < w && white(right, midY) {
				right++
			}
			return spicetrace.Rect{Top: int32(top), Left: int32(left), Bottom: int32(bottom), Right: int32(right)}, nil
		}
	}
	return spicetrace.Rect{}, errNoArea
}

// GuestToWindow maps a pixel of the guest's screen inside the typing
// xterm (typing, its rectangle on the guest's screen) to the pixel of
// spicy's window that shows its middle, from area, the xterm's white area
// as found in the window (FindArea). The xterm's inside starts a pixel of
// border in from typing's top left; the white area's edges are the
// pixels that are wholly white, so they lie within a pixel of the scaled
// inside's edges, half a pixel in on average.
func GuestToWindow(typing, area spicetrace.Rect) func(x, y int) (int, int) {
	sx := (float64(area.Right-area.Left) + 1) / float64(typing.Right-typing.Left)
	sy := (float64(area.Bottom-area.Top) + 1) / float64(typing.Bottom-typing.Top)
	return func(x, y int) (int, int) {
		wx := float64(area.Left) - 0.5 + (float64(x-int(typing.Left)-1)+0.5)*sx
		wy := float64(area.Top) - 0.5 + (float64(y-int(typing.Top)-1)+0.5)*sy
		return int(math.Floor(wx)), int(math.Floor(wy))
	}
}
