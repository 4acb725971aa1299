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
// batch read, each frame judged by the model at its arrival stamp (held
// in the carrier's line in due order, or freed), and the loop's side of
// linkmodel.Frames.

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
		// The order every carrier keeps (linkmodel.Carrier): the
		// schedule, then the link's choices from a queue discipline, then
		// the frames due by this arrival leave, so the limit sees what it
		// would have seen at that instant; then the frame is judged.
		l.applyChangesUpTo(at)
		l.carry.DequeueUpTo(at)
		if err := l.sendDue(at, now); err != nil {
			return n, err
		}
		l.carry.Judge(at, b, size)
	}
	l.publish()
	return n, nil
}

// Release returns buffer b to the free list (linkmodel.Frames; nothing
// for linkmodel.NoRef).
func (l *dirLoop) Release(b int32) {
	if b != linkmodel.NoRef {
		l.free = append(l.free, b)
	}
}

// Edit applies the model's edit to the frame in buffer b
// (linkmodel.Frames).
func (l *dirLoop) Edit(b int32, size int, e linkmodel.Edit) {
	off := int(b) * l.slot
	e.Apply(l.arena[off+vnetHdrLen:off+vnetHdrLen+size], l.arena[off:off+vnetHdrLen])
}

// Classify reads the queue discipline's flow hash and ECN capability
// from the frame in buffer b (linkmodel.Frames).
func (l *dirLoop) Classify(b int32, size int) (flow uint32, ect bool) {
	off := int(b)*l.slot + vnetHdrLen
	flow, ect, _ = aqm.Classify(l.arena[off:off+size], l.flowSeed)
	return flow, ect
}

// Copy copies the frame in buffer b (size bytes and the virtio-net
// header before them) into a free buffer, for a duplicate
// (linkmodel.Frames). There is always one: the model accepts at most
// Limit frames and the buffers are Limit plus a receive batch.
func (l *dirLoop) Copy(b int32, size int) int32 {
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
