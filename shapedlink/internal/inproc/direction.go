package inproc

import (
	"math"
	"net/netip"
	"sync"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/aqm"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkmodel"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// This file is one direction's carrier: the model judges each datagram
// when it is written (at time.Now), the Carrier holds it in due order,
// and the direction's goroutine, asleep on a timer until the next frame
// is due (or the queue discipline's next choice, or the schedule's next
// change), moves it on to the far end's socket.

// wireOverhead is what a UDP datagram carries on the emulator's veth
// besides its payload: the Ethernet, IPv4 and UDP headers. The rate and
// the limit's bytes count it, as they count it there.
const wireOverhead = 14 + 20 + 8

// frame is a datagram in flight: its addresses and payload (never changed
// in place: a duplicate shares it), its number in the direction, and what
// the model did to it.
type frame struct {
	from, to netip.AddrPort
	data     []byte
	seq      uint64
	dup      bool
	edit     linkmodel.Edit
}

// direction is one direction of the link and its goroutine. It holds the
// frames' bytes for its Carrier (linkmodel.Frames: a frame's Ref is its
// index in frames).
type direction struct {
	link  *Link
	dir   linkspec.Dir
	to    *end
	wake  chan struct{} // the next event may be earlier than the goroutine's timer
	flows uint32        // the queue discipline's flow hash seed, as the emulator's

	mu     sync.Mutex
	c      linkspec.Counters // the model counts into it too
	carry  *linkmodel.Carrier
	frames []frame
	free   []int64
	seq    uint64
	target int64 // when the goroutine will next look, MaxInt64 when idle
	closed bool
	// The frame being judged, and the discipline's drop of it, if its
	// enqueue dropped it: its trace event is then that drop.
	judging     int64
	judgingDrop What
}

func newDirection(l *Link, dir linkspec.Dir, spec linkspec.Direction) *direction {
	d := &direction{link: l, dir: dir, to: l.ends[1-int(dir)], wake: make(chan struct{}, 1),
		flows: uint32(spec.Seed>>32 ^ spec.Seed), target: math.MaxInt64, judging: linkmodel.NoRef}
	d.carry = linkmodel.NewCarrier(linkmodel.New(spec, &d.c), spec.MaxHeld(), d)
	d.carry.OnQueueDrop = func(ref int64, size int, c aqm.Cause) {
		what := QueueDrop
		if c == aqm.CoDelDrop {
			what = CoDelDrop
		}
		if ref == d.judging {
			d.judgingDrop = what
			return
		}
		d.event(d.frames[ref], size, what, d.link.now(), 0)
	}
	return d
}

// send carries payload p from one end's socket to the other's: the
// model judges it at the time of the write.
func (d *direction) send(from, to netip.AddrPort, p []byte) error {
	data := append([]byte(nil), p...)
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return errLinkClosed
	}
	now := d.link.now()
	d.catchUp(now)
	d.c.Received++
	d.c.Stamped++ // its arrival time is the write's, exactly
	d.seq++
	size := wireOverhead + len(p)
	ref := d.hold(frame{from: from, to: to, data: data, seq: d.seq})
	d.judging, d.judgingDrop = ref, Accepted
	j := d.carry.Judge(now, ref, size)
	d.judging = linkmodel.NoRef
	if j.Dup {
		f := frame{from: from, to: to, seq: d.seq, dup: true}
		d.event(f, size, verdictWhat(j.DupVerdict), now, j.DupDue)
	}
	what, due := verdictWhat(j.Verdict), j.Due
	switch {
	case d.judgingDrop != Accepted:
		what, due = d.judgingDrop, 0
	case j.Enqueued:
		due = 0 // set when it leaves the queue
	}
	d.event(frame{from: from, to: to, seq: d.seq}, size, what, now, due)
	if next := d.next(); next < d.target {
		select {
		case d.wake <- struct{}{}:
		default:
		}
	}
	return nil
}

// catchUp does what was due by now, in the order every carrier keeps
// (linkmodel.Carrier): the schedule, the queue discipline's choices, then
// the frames due leave for the far end.
func (d *direction) catchUp(now int64) {
	if n, first := d.carry.Model.Advance(now); n > 0 {
		if lag := now - first; lag > 0 {
			d.c.MaxChangeLagNanos = max(d.c.MaxChangeLagNanos, uint64(lag))
		}
	}
	d.carry.DequeueUpTo(now)
	for d.carry.Line.Len() > 0 && d.carry.Line.At(0).Due <= now {
		h := d.carry.Depart()
		f := d.frames[h.Ref]
		f.edit = h.Edit // the model's edit, made as the frame leaves
		d.Release(h.Ref)
		d.c.Forwarded++
		d.c.ForwardedBytes += uint64(h.Size)
		late := uint64(now - h.Due)
		d.c.LateNanos += late
		d.c.MaxLateNanos = max(d.c.MaxLateNanos, late)
		d.c.Late[linkspec.LateBucket(late)]++
		d.deliver(f, int(h.Size), now)
	}
}

// next is when the direction next has something to do: the head frame's
// due time, the queue discipline's next choice or the schedule's next
// change (math.MaxInt64 for none).
func (d *direction) next() int64 {
	next := d.carry.Model.NextChange()
	if d.carry.Line.Len() > 0 {
		next = min(next, d.carry.Line.At(0).Due)
	}
	if at, ok := d.carry.Model.NextDequeue(); ok {
		next = min(next, at)
	}
	return next
}

// run is the direction's goroutine: it sleeps until the next event (or a
// write that brings one forward), catches up, and sleeps again, until
// the link is closed.
func (d *direction) run() {
	defer d.link.done.Done()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		d.mu.Lock()
		now := d.link.now()
		d.catchUp(now)
		d.target = d.next()
		target := d.target
		d.mu.Unlock()
		var fire <-chan time.Time
		if target != math.MaxInt64 {
			timer.Reset(time.Duration(target - now))
			fire = timer.C
		}
		select {
		case <-d.wake:
		case <-fire:
		case <-d.link.stop:
			timer.Stop()
			return
		}
		timer.Stop()
	}
}

// hold stores f and returns its ref.
func (d *direction) hold(f frame) int64 {
	if n := len(d.free); n > 0 {
		ref := d.free[n-1]
		d.free = d.free[:n-1]
		d.frames[ref] = f
		return ref
	}
	d.frames = append(d.frames, f)
	return int64(len(d.frames) - 1)
}

// Copy makes the duplicate of frame ref, sharing its payload
// (linkmodel.Frames); its edit comes with its Held.
func (d *direction) Copy(ref int64, _ int) int64 {
	f := d.frames[ref]
	f.dup, f.edit = true, linkmodel.Edit{}
	return d.hold(f)
}

// Release frees frame ref (linkmodel.Frames).
func (d *direction) Release(ref int64) {
	if ref == linkmodel.NoRef {
		return
	}
	d.frames[ref] = frame{}
	d.free = append(d.free, ref)
}

// Classify hashes frame ref's addresses and ports as the emulator's
// queue discipline hashes the frame it reads (linkmodel.Frames). The
// datagram is Not-ECT: a net.PacketConn cannot set the ECN field.
func (d *direction) Classify(ref int64, size int) (flow uint32, ect bool) {
	f := d.frames[ref]
	flow, ect, _ = aqm.Classify(header(f.from, f.to, size-wireOverhead), d.flows)
	return flow, ect
}
