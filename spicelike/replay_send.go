package spicelike

import (
	"container/heap"
	"io"
	"sync"
	"time"
)

// ReplayStats is how faithfully one end played its half of a replay.
type ReplayStats struct {
	// Messages and Bytes count what this end sent (end frames excluded).
	Messages int64 `json:"messages"`
	Bytes    int64 `json:"bytes"`
	// Inflated counts messages recorded smaller than a frame header, and
	// the bytes added to them.
	Inflated      int64 `json:"inflated"`
	InflatedBytes int64 `json:"inflated_bytes"`
	// Late counts messages that left more than 1 ms after their time
	// (the transport, or the host, could not keep up); MaxLate is the
	// worst lateness.
	Late    int64         `json:"late"`
	MaxLate time.Duration `json:"max_late_ns"`
	// Echoes counts the key echoes the server sent.
	Echoes int64 `json:"echoes,omitempty"`
}

func (s *ReplayStats) add(o ReplayStats) {
	s.Messages += o.Messages
	s.Bytes += o.Bytes
	s.Inflated += o.Inflated
	s.InflatedBytes += o.InflatedBytes
	s.Late += o.Late
	s.MaxLate = max(s.MaxLate, o.MaxLate)
	s.Echoes += o.Echoes
}

// lateLimit is the lateness from which a message counts as late.
const lateLimit = time.Millisecond

// outFrame is a frame waiting for its time.
type outFrame struct {
	due  time.Time
	size int
	kind byte
	key  uint32
}

type frameHeap []outFrame

func (h frameHeap) Len() int           { return len(h) }
func (h frameHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h frameHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *frameHeap) Push(x any)        { *h = append(*h, x.(outFrame)) }
func (h *frameHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// sender plays one direction of one channel: its scheduled messages, in
// order, looping every span, and the echoes put in front of it as keys
// arrive. It writes each frame at its time, or as soon as it can after.
type sender struct {
	w     io.Writer
	start time.Time
	span  time.Duration
	keys  int
	sched []ReplayMessage
	// onKey is called just before a key frame is written, with the key's
	// number over the run and the time.
	onKey func(key int, at time.Time)

	mu     sync.Mutex
	echoes frameHeap
	wake   chan struct{}

	next, loop int
	buf        []byte
	stats      ReplayStats
}

func newSender(w io.Writer, start time.Time, r *Replay, sched []ReplayMessage) *sender {
	biggest := replayFrameHeader
	for _, m := range sched {
		biggest = max(biggest, m.Size)
	}
	return &sender{w: w, start: start, span: r.Span, keys: r.Keys, sched: sched, wake: make(chan struct{}, 1), buf: make([]byte, biggest)}
}

// grow makes room for frames up to n bytes (echoes arrive later than the
// buffer is sized).
func (s *sender) grow(n int) {
	if n > len(s.buf) {
		s.buf = make([]byte, n)
	}
}

// echo schedules an echo frame; the sender goroutine picks it up.
func (s *sender) echo(f outFrame) {
	s.mu.Lock()
	heap.Push(&s.echoes, f)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// peek returns the next frame due: the next scheduled message or the
// earliest echo, whichever is sooner. fromHeap says which.
func (s *sender) peek() (f outFrame, fromHeap, ok bool) {
	if len(s.sched) > 0 {
		if s.next == len(s.sched) {
			s.next, s.loop = 0, s.loop+1
		}
		m := s.sched[s.next]
		f = outFrame{due: s.start.Add(time.Duration(s.loop)*s.span + m.At), size: m.Size, kind: frameData}
		if m.Kind == KindKey {
			f.kind, f.key = frameKey, uint32(s.loop*s.keys+m.Key)
		}
		ok = true
	}
	s.mu.Lock()
	if len(s.echoes) > 0 && (!ok || s.echoes[0].due.Before(f.due)) {
		f, fromHeap, ok = s.echoes[0], true, true
	}
	s.mu.Unlock()
	return f, fromHeap, ok
}

// run sends until done closes, then writes the end frame. It returns the
// first write error.
func (s *sender) run(done <-chan struct{}) error {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		f, fromHeap, ok := s.peek()
		wait := time.Hour
		if ok {
			wait = time.Until(f.due)
		}
		if wait > 0 {
			timer.Reset(wait)
			select {
			case <-done:
				return s.write(outFrame{size: replayFrameHeader, kind: frameEnd})
			case <-s.wake:
				continue // an echo came in: look again
			case <-timer.C:
				continue
			}
		}
		select {
		case <-done:
			return s.write(outFrame{size: replayFrameHeader, kind: frameEnd})
		default:
		}
		if fromHeap {
			s.mu.Lock()
			heap.Pop(&s.echoes)
			s.mu.Unlock()
		} else {
			s.next++
		}
		if f.kind == frameKey && s.onKey != nil {
			s.onKey(int(f.key), time.Now())
		}
		if err := s.write(f); err != nil {
			return err
		}
		if late := time.Since(f.due); late > lateLimit {
			s.stats.Late++
			s.stats.MaxLate = max(s.stats.MaxLate, late)
		}
	}
}

func (s *sender) write(f outFrame) error {
	n := frameSize(f.size)
	s.grow(n)
	b := s.buf[:n]
	putFrame(b, f.kind, f.key)
	if _, err := s.w.Write(b); err != nil {
		return err
	}
	if f.kind == frameEnd {
		return nil
	}
	s.stats.Messages++
	s.stats.Bytes += int64(n)
	if n > f.size {
		s.stats.Inflated++
		s.stats.InflatedBytes += int64(n - f.size)
	}
	if f.kind == frameEcho {
		s.stats.Echoes++
	}
	return nil
}
