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
		l.carry.DequeueUpTo(at)
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
// wire length, through the carrier, which holds the ones it accepts; the
// buffer is freed at once if it holds none. A super-packet package segment
// cannot cut is judged whole, as one segment of its full length, and
// counted in JudgedWhole.
func (l *dirLoop) arrive(at int64, stamped bool, b int32, size int) {
	off := int(b) * l.slot
	st := &l.bufs[b]
	f, err := segment.Parse(l.arena[off:off+vnetHdrLen], l.arena[off+vnetHdrLen:off+vnetHdrLen+size])
	*st = bufState{f: f, whole: err != nil || !f.Split()}
	if err != nil {
		l.c.JudgedWhole++
	}
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
	// A reference per segment, given back for each the carrier refuses
	// (Release), and one of the loop's own while it judges them, so a
	// queue discipline that drops a segment cannot free the buffer under
	// the rest.
	st.refs = int32(segs) + 1
	for s := int32(0); s < int32(segs); s++ {
		segLen := size
		if !st.whole {
			segLen = f.SegLen(int(s))
		}
		l.carry.Judge(at, segRef(b, s), segLen)
	}
	l.unref(b)
}

// unref drops one reference to buffer b and frees it with the last.
func (l *dirLoop) unref(b int32) {
	st := &l.bufs[b]
	st.refs--
	if st.refs == 0 {
		l.free = append(l.free, b)
	}
}

// Copy holds segment ref once more, for a duplicate, which shares its
// buffer (linkmodel.Frames): the duplicate's edit is made on a copy when
// it is sent, so it carries the bytes as they arrived.
func (l *dirLoop) Copy(ref int64, _ int) int64 {
	b, _ := bufSeg(ref)
	l.bufs[b].refs++
	return ref
}

// Release gives up segment ref's hold on its buffer (linkmodel.Frames).
func (l *dirLoop) Release(ref int64) {
	if ref == linkmodel.NoRef {
		return
	}
	b, _ := bufSeg(ref)
	l.unref(b)
}

// Classify reads the queue discipline's flow hash and ECN capability
// from the frame segment ref belongs to (linkmodel.Frames); every
// segment of a super-packet has its headers.
func (l *dirLoop) Classify(ref int64, _ int) (flow uint32, ect bool) {
	b, _ := bufSeg(ref)
	flow, ect, _ = aqm.Classify(l.bufs[b].f.Bytes(), l.flowSeed)
	return flow, ect
}

// publishFlows publishes the fullest flowSamples flow queues (by bytes)
// for the queue sampler.
func (l *dirLoop) publishFlows() {
	l.flowBuf = l.model.FlowBacklogs(l.flowBuf)
	l.sh.storeFlows(fullestFlows(l.flowBuf, flowSamples))
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
