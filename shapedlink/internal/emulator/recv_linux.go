package emulator

import (
	"cmp"
	"fmt"
	"slices"
	"time"
	"unsafe"

	"github.com/shakenfist/quicbench/shapedlink/internal/aqm"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkmodel"
	"golang.org/x/sys/unix"
)

// This file is the receiving half of a direction's forwarding loop: a
// batch read, each frame judged by the model at its arrival stamp, held in
// the ring in due order or freed.

// recv reads one batch of frames and passes each through the model,
// arriving at its kernel receive timestamp. It returns how many frames it
// read.
func (l *dirLoop) recv() (int, error) {
	top := len(l.free)
	for i := 0; i < rxBatch; i++ {
		b := l.free[top-1-i]
		l.rxBuf[i] = b
		l.rxIov[i].Base = &l.arena[int(b)*l.slot]
		l.rxIov[i].SetLen(l.slot)
		l.rxHdr[i].Hdr.Namelen = unix.SizeofSockaddrLinklayer
		l.rxHdr[i].Hdr.Control = &l.rxCtl[i*ctlLen]
		l.rxHdr[i].Hdr.SetControllen(ctlLen)
		l.rxHdr[i].Hdr.Flags = 0
	}
	r, _, errno := unix.RawSyscall6(unix.SYS_RECVMMSG, uintptr(l.rx), uintptr(unsafe.Pointer(&l.rxHdr[0])), rxBatch, unix.MSG_DONTWAIT|unix.MSG_TRUNC, 0, 0)
	if errno != 0 {
		if errno == unix.EAGAIN {
			l.lastDrain = l.now()
			return 0, nil
		}
		if errno == unix.EINTR {
			return 0, nil
		}
		return 0, fmt.Errorf("recvmmsg: %w", errno)
	}
	n := int(r)
	wall := time.Now()
	now := int64(wall.Sub(l.base))
	real := wall.UnixNano()
	if n < rxBatch {
		l.lastDrain = now
	}
	l.free = l.free[:top-rxBatch]
	for i := 0; i < rxBatch; i++ {
		b := l.rxBuf[rxBatch-1-i] // give back in the original stack order
		if i < rxBatch-n {
			l.free = append(l.free, b)
		}
	}
	for i := 0; i < n; i++ {
		b := l.rxBuf[i]
		if l.rxName[i].Pkttype == unix.PACKET_OUTGOING {
			l.free = append(l.free, b)
			continue
		}
		l.c.Received++
		size := int(l.rxHdr[i].Len) - vnetHdrLen
		if l.rxHdr[i].Hdr.Flags&unix.MSG_TRUNC != 0 || size+vnetHdrLen > l.slot || size <= 0 {
			l.c.OversizeDrops++
			l.free = append(l.free, b)
			continue
		}
		at := l.arrival(i, now, real)
		l.applyChangesUpTo(at)
		// Frames due by this arrival leave before it is judged, so the
		// limit sees what it would have seen at that instant; with a
		// queue discipline, so do the link's choices from the queue.
		if l.model.HasQueue() {
			l.dequeueUpTo(at)
		}
		if err := l.sendDue(at, now); err != nil {
			return n, err
		}
		if l.model.HasQueue() {
			frame := l.frame(b, size)
			flow, ect, _ := aqm.Classify(frame, l.flowSeed)
			if l.model.Enqueue(at, aqm.Packet{Len: size, Flow: flow, ECT: ect, Ref: b}) != linkmodel.Accepted {
				l.free = append(l.free, b)
				continue
			}
			orig, _ := l.model.Edits()
			l.edit(orig, b, size)
			continue
		}
		due, v := l.model.Arrive(at, size)
		orig, dupe := l.model.Edits()
		if ddue, dv, dq, _, ok := l.model.Duplicate(); ok {
			// Only an accepted duplicate gets a buffer: the model then
			// counts it among the frames held, which the buffers are
			// sized for (a refused one, copied first, could find none).
			// It is copied before the original's edit, as netem clones
			// before it mangles.
			c := noBuffer
			if dv == linkmodel.Accepted {
				c = l.copyFrame(b, size)
				l.edit(dupe, c, size)
			}
			l.judged(ddue, dv, dq, c, size)
		}
		if v == linkmodel.Accepted {
			l.edit(orig, b, size)
		}
		l.judged(due, v, l.model.Queued(), b, size)
	}
	l.publish()
	return n, nil
}

// judged acts on the model's verdict for a frame in buffer b: free it
// (the model has counted it), or hold it in the ring in due order. The
// ring is kept sorted by due time with ties in arrival order, as netem's
// tfifo is: with a rate every frame goes to the tail, and only a
// reordered frame (due at once) or, with no rate, jittered ones move
// forward.
func (l *dirLoop) judged(due int64, v linkmodel.Verdict, queued bool, b int32, size int) {
	if v != linkmodel.Accepted {
		l.release(b)
		return
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
		if l.ring[prev].due <= due {
			break
		}
		l.ring[idx] = l.ring[prev]
		idx = prev
	}
	l.ring[idx] = entry{buf: b, size: int32(size), due: due, queued: queued}
	l.n++
}

// noBuffer stands for a frame that holds no buffer: a duplicate the model
// refused, which was never copied.
const noBuffer = int32(-1)

// release returns buffer b to the free list (nothing for noBuffer).
func (l *dirLoop) release(b int32) {
	if b != noBuffer {
		l.free = append(l.free, b)
	}
}

// edit applies the model's edit to the frame in buffer b.
func (l *dirLoop) edit(e linkmodel.Edit, b int32, size int) {
	if e != (linkmodel.Edit{}) {
		off := int(b) * l.slot
		e.Apply(l.arena[off+vnetHdrLen:off+vnetHdrLen+size], l.arena[off:off+vnetHdrLen])
	}
}

// frame is the Ethernet frame of size bytes in buffer b.
func (l *dirLoop) frame(b int32, size int) []byte {
	off := int(b)*l.slot + vnetHdrLen
	return l.arena[off : off+size]
}

// dequeueUpTo runs the link's choices from the queue discipline up to
// time t: each frame it takes is serialised and delayed by the model and
// joins the frames held for their due times; one it marks gets CE set.
func (l *dirLoop) dequeueUpTo(t int64) {
	for {
		at, ok := l.model.NextDequeue()
		if !ok || at > t {
			return
		}
		p, due, marked, queued, ok := l.model.Dequeue(at)
		if !ok {
			continue // the discipline dropped what was left
		}
		l.edit(linkmodel.Edit{Mark: marked}, p.Ref, p.Len)
		l.judged(due, linkmodel.Accepted, queued, p.Ref, p.Len)
	}
}

// copyFrame copies the frame in buffer b (size bytes and the virtio-net
// header before them) into a free buffer, for a duplicate. There is
// always one: the model accepts at most Limit frames and the buffers are
// Limit plus a receive batch.
func (l *dirLoop) copyFrame(b int32, size int) int32 {
	c := l.free[len(l.free)-1]
	l.free = l.free[:len(l.free)-1]
	n := size + vnetHdrLen
	copy(l.arena[int(c)*l.slot:int(c)*l.slot+n], l.arena[int(b)*l.slot:int(b)*l.slot+n])
	return c
}

// publishFlows publishes the fullest FlowSamples flow queues (by bytes)
// for the queue sampler.
func (l *dirLoop) publishFlows() {
	l.flowBuf = l.model.FlowBacklogs(l.flowBuf)
	l.sh.storeFlows(fullestFlows(l.flowBuf, FlowSamples))
}

// publish sets the gauges and publishes the counters for the parent.
func (l *dirLoop) publish() {
	p, b := l.model.Held()
	l.c.Packets, l.c.Bytes = uint64(p), uint64(b)
	if l.model.HasQueue() {
		q, _ := l.model.QueueLen()
		l.c.Queued = uint64(q)
	}
	l.sh.publish(&l.c)
}

// applyChangesUpTo applies every scheduled change due at or before t
// (the model applies them; the loop counts how late it got to them).
func (l *dirLoop) applyChangesUpTo(t int64) {
	if n, first := l.model.Advance(t); n > 0 {
		if lag := l.now() - first; lag > 0 {
			l.c.MaxChangeLagNanos = max(l.c.MaxChangeLagNanos, uint64(lag))
		}
		l.delay = l.model.Delay()
	}
}

// fullestFlows sorts fl by bytes held, fullest first (in place), and
// returns at most n of them.
func fullestFlows(fl []aqm.FlowBacklog, n int) []aqm.FlowBacklog {
	slices.SortFunc(fl, func(a, b aqm.FlowBacklog) int { return cmp.Compare(b.Bytes, a.Bytes) })
	return fl[:min(len(fl), n)]
}
