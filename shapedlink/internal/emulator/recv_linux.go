package emulator

import (
	"cmp"
	"fmt"
	"slices"
	"time"
	"unsafe"

	"github.com/shakenfist/quicbench/shapedlink/internal/aqm"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkmodel"
	"github.com/shakenfist/quicbench/shapedlink/internal/segment"
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
		if errno == unix.EINVAL && l.keep {
			// The kernel could not put the frame's offload into a
			// virtio-net header and dropped it (it has been consumed).
			l.c.UnreadableDrops++
			l.publish()
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
		at, stamped := l.arrival(i, now, real)
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
		l.arrive(at, stamped, b, size)
	}
	l.publish()
	return n, nil
}

// arrive judges the frame of size bytes in buffer b, arriving at at: each
// of its wire segments in turn (one for a frame that is not a
// super-packet), as the model would judge them arriving together at their
// wire length, and holds the ones it accepts; the buffer is freed at once
// if it holds none.
func (l *dirLoop) arrive(at int64, stamped bool, b int32, size int) {
	off := int(b) * l.slot
	st := &l.bufs[b]
	f, err := segment.Parse(l.arena[off:off+vnetHdrLen], l.arena[off+vnetHdrLen:off+vnetHdrLen+size])
	// The loop holds a reference of its own while it judges the frame, so
	// a queue discipline that drops one of its segments cannot free the
	// buffer under it.
	*st = bufState{f: f, whole: err != nil || !f.Split(), refs: 1}
	segs := 1
	if !st.whole {
		segs = f.Segments()
	}
	if segs > 1 {
		l.c.SuperPacketsIn++
		l.c.Received += uint64(segs - 1) // the frame's first was counted when read
	}
	if stamped {
		l.c.Stamped += uint64(segs)
	}
	var flow uint32
	var ect bool
	if l.model.HasQueue() {
		flow, ect, _ = aqm.Classify(f.Bytes(), l.flowSeed)
	}
	for s := int32(0); s < int32(segs); s++ {
		segLen := size
		if !st.whole {
			segLen = f.SegLen(int(s))
		}
		if l.model.HasQueue() {
			st.refs++ // the queue's, given back if it refuses or drops the segment
			if l.model.Enqueue(at, aqm.Packet{Len: segLen, Flow: flow, ECT: ect, Ref: int64(b) | int64(s)<<32}) != linkmodel.Accepted {
				st.refs--
			}
			continue
		}
		due, v := l.model.Arrive(at, segLen)
		orig, dupe := l.model.Edits()
		if ddue, dv, dq, _, ok := l.model.Duplicate(); ok && dv == linkmodel.Accepted {
			// The duplicate is judged first and shares the buffer; its
			// bytes are the original's as they arrived, with its own edit.
			l.hold(entry{buf: b, seg: s, size: int32(segLen), due: ddue, queued: dq, edit: dupe})
		}
		if v == linkmodel.Accepted {
			l.hold(entry{buf: b, seg: s, size: int32(segLen), due: due, queued: l.model.Queued(), edit: orig})
		}
	}
	l.unref(b)
}

// hold puts e in the ring in due order, counting it against its buffer.
// The ring is kept sorted by due time with ties in arrival order, as
// netem's tfifo is: with a rate every frame goes to the tail, and only a
// reordered frame (due at once) or, with no rate, jittered ones move
// forward.
func (l *dirLoop) hold(e entry) {
	l.bufs[e.buf].refs++
	idx := l.head + l.n
	if idx >= len(l.ring) {
		idx -= len(l.ring)
	}
	for k := l.n; k > 0; k-- {
		prev := idx - 1
		if prev < 0 {
			prev = len(l.ring) - 1
		}
		if l.ring[prev].due <= e.due {
			break
		}
		l.ring[idx] = l.ring[prev]
		idx = prev
	}
	l.ring[idx] = e
	l.n++
}

// unref drops one reference to buffer b and frees it with the last.
func (l *dirLoop) unref(b int32) {
	st := &l.bufs[b]
	st.refs--
	if st.refs == 0 {
		l.free = append(l.free, b)
	}
}

// dequeueUpTo runs the link's choices from the queue discipline up to
// time t: each frame it takes is serialised and delayed by the model and
// joins the frames held for their due times, with its edit (a CE mark,
// corruption) to be made when it is sent.
func (l *dirLoop) dequeueUpTo(t int64) {
	for {
		at, ok := l.model.NextDequeue()
		if !ok || at > t {
			return
		}
		p, due, edit, queued, ok := l.model.Dequeue(at)
		if !ok {
			continue // the discipline dropped what was left
		}
		// The queue held a reference to the buffer; the ring takes it over.
		b := int32(p.Ref)
		l.bufs[b].refs--
		l.hold(entry{buf: b, seg: int32(p.Ref >> 32), size: int32(p.Len), due: due, queued: queued, edit: edit})
	}
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
