package emulator

import (
	"unsafe"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkmodel"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
	"golang.org/x/sys/unix"
)

// This file is the sending half of a direction's forwarding loop: held
// segments written when due, in batches, the consecutive segments of one
// super-packet that are due together as one frame, and their lateness
// counted.

// sendDue writes the held segments that leave at now with cutoff (see
// leaves), in line order; now is also the time for the lateness figures.
func (l *dirLoop) sendDue(cutoff, now int64) error {
	line := &l.carry.Line
	for line.Len() > 0 && leaves(line.At(0), cutoff, now) {
		k, covered := 0, 0
		for k < txBatch && covered < line.Len() {
			if !leaves(line.At(covered), cutoff, now) {
				break
			}
			covered += l.message(k, covered, cutoff, now)
			k++
		}
		sent := 0
		for sent < k {
			r, _, errno := unix.RawSyscall6(unix.SYS_SENDMMSG, uintptr(l.tx), uintptr(unsafe.Pointer(&l.txHdr[sent])), uintptr(k-sent), unix.MSG_DONTWAIT, 0, 0)
			if errno != 0 {
				if errno == unix.EAGAIN || errno == unix.EINTR {
					break // the frames stay held; try again on the next turn
				}
				// This frame is lost (e.g. ENOBUFS: the peer's backlog
				// is full); count its segments and go on with the next.
				for range l.txEntries[sent] {
					l.c.SendErrors++
					l.retire(now, false)
				}
				sent++
				continue
			}
			for j := sent; j < sent+int(r); j++ {
				l.c.FramesOut++
				if l.txEntries[j] > 1 {
					l.c.SuperPacketsOut++
				}
				for range l.txEntries[j] {
					l.retire(now, true)
				}
			}
			sent += int(r)
		}
		l.publish()
		if sent < k {
			return nil
		}
	}
	return nil
}

// leaves says whether held segment e leaves at now with the given
// cutoff: it is due by the cutoff, and (sent early, within a departure
// window) not before it would have been due had it not waited for the
// segments ahead of it.
func leaves(e *linkmodel.Held, cutoff, now int64) bool {
	return e.Due <= cutoff && e.Due-e.Ahead <= now
}

// message sets up message k from the held entries starting at the i-th,
// all leaving by cutoff at now, and returns how many entries it carries: a whole
// frame as it arrived; a segment the model edited, copied and edited; or
// a run of consecutive segments of one super-packet, with the headers the
// run needs (package segment) and its payload in place.
func (l *dirLoop) message(k, i int, cutoff, now int64) int {
	line := &l.carry.Line
	e := line.At(i)
	b, seg := bufSeg(e.Ref)
	st := &l.bufs[b]
	off := int(b) * l.slot
	iov := l.txIov[2*k : 2*k+2]
	scratch := l.txScratch[k*(l.slot+vnetHdrLen) : (k+1)*(l.slot+vnetHdrLen)]
	n := 1
	switch {
	case e.Edit != (linkmodel.Edit{}):
		// A copy, so a duplicate sharing the buffer keeps the bytes as
		// they arrived.
		var frame []byte
		if st.whole {
			frame = scratch[:vnetHdrLen+len(st.f.Bytes())]
			copy(frame, l.arena[off:])
		} else {
			hdr := st.f.Run(int(seg), int(seg), scratch)
			frame = append(scratch[:len(hdr)], st.f.Payload(int(seg), int(seg))...)
		}
		e.Edit.Apply(frame[vnetHdrLen:], frame[:vnetHdrLen])
		setIov(iov[:1], frame)
		l.txHdr[k].Hdr.SetIovlen(1)
	case st.whole:
		setIov(iov[:1], l.arena[off:off+vnetHdrLen+len(st.f.Bytes())])
		l.txHdr[k].Hdr.SetIovlen(1)
	default:
		last := int(seg)
		for i+n < line.Len() {
			next := line.At(i + n)
			nb, ns := bufSeg(next.Ref)
			if !leaves(next, cutoff, now) || nb != b || int(ns) != last+1 || next.Edit != (linkmodel.Edit{}) {
				break
			}
			last++
			n++
		}
		setIov(iov[:1], st.f.Run(int(seg), last, scratch))
		setIov(iov[1:], st.f.Payload(int(seg), last))
		l.txHdr[k].Hdr.SetIovlen(2)
	}
	l.txEntries[k] = n
	return n
}

// setIov points iov[0] at b.
func setIov(iov []unix.Iovec, b []byte) {
	iov[0].Base = &b[0]
	iov[0].SetLen(len(b))
}

// retire removes the head segment after it was written (or failed).
func (l *dirLoop) retire(now int64, ok bool) {
	e := l.carry.Depart()
	b, _ := bufSeg(e.Ref)
	l.unref(b)
	if ok {
		l.c.Forwarded++
		l.c.ForwardedBytes += uint64(e.Size)
		var late uint64
		if now >= e.Due {
			late = uint64(now - e.Due)
		} else {
			// Sent ahead within the departure window: no lateness.
			l.c.Early++
			l.c.MaxEarlyNanos = max(l.c.MaxEarlyNanos, uint64(e.Due-now))
		}
		l.c.LateNanos += late
		l.c.MaxLateNanos = max(l.c.MaxLateNanos, late)
		l.c.Late[linkspec.LateBucket(late)]++
		if l.marker >= 0 && !l.marked && int64(late) > l.markLate {
			l.markLateness(int64(late))
		}
	}
}
