package linkmodel

// Held is a frame a carrier holds until it is due: Ref is the carrier's
// handle on the frame's bytes (a buffer index, say, or a buffer and a
// segment of it; the model never sees the bytes), Size its length as the rate counts it, and Queued says it
// waited behind another frame for the rate (so it belongs to a busy
// stretch of traffic, where a timer's wake-up error is immaterial).
type Held struct {
	Due    int64
	Ref    int64
	Size   int32
	Queued bool
	// Ahead is how long before Due the frame may leave at the earliest:
	// the time it waited for the frames ahead of it in the rate queue, so
	// that a carrier sending early never sends a frame before it would
	// have been due on an idle link. Zero: never before Due.
	Ahead int64
	// Edit is what the model decided to do to the frame's bytes, for the
	// carrier to make as it sends the frame (the zero Edit changes
	// nothing).
	Edit Edit
}

// NoRef stands for a frame that holds no bytes: a duplicate the model
// refused, which was never copied.
const NoRef = int64(-1)

// Line is the frames a direction holds, in the order they leave: sorted
// by due time, ties in arrival order, as netem's tfifo keeps them. With a
// rate every frame joins the tail; only a reordered frame (due at once)
// or, with no rate, a jittered one moves forward. It is a ring whose
// capacity the carrier sizes for the most frames the model can hold
// (Direction.MaxHeld), so that holding a frame never allocates; should
// it ever be full it grows rather than refuse a frame the model accepted.
type Line struct {
	ring    []Held
	head, n int
}

// Len is the number of frames held.
func (l *Line) Len() int { return l.n }

// At is the k-th frame to leave (0 is the head), for k < Len.
func (l *Line) At(k int) *Held {
	i := l.head + k
	if i >= len(l.ring) {
		i -= len(l.ring)
	}
	return &l.ring[i]
}

// hold inserts h after every frame due at or before h.Due.
func (l *Line) hold(h Held) {
	if l.n == len(l.ring) {
		l.grow()
	}
	idx := l.head + l.n
	if idx >= len(l.ring) {
		idx -= len(l.ring)
	}
	for k := l.n; k > 0; k-- {
		prev := idx - 1
		if prev < 0 {
			prev = len(l.ring) - 1
		}
		if l.ring[prev].Due <= h.Due {
			break
		}
		l.ring[idx] = l.ring[prev]
		idx = prev
	}
	l.ring[idx] = h
	l.n++
}

// grow doubles the ring, keeping the frames in order from index 0.
func (l *Line) grow() {
	ring := make([]Held, max(2*len(l.ring), 16))
	for k := range l.n {
		ring[k] = *l.At(k)
	}
	l.ring, l.head = ring, 0
}

// pop removes and returns the head.
func (l *Line) pop() Held {
	h := l.ring[l.head]
	l.head++
	if l.head == len(l.ring) {
		l.head = 0
	}
	l.n--
	return h
}
