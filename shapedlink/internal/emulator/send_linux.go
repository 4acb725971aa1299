package emulator

import (
	"unsafe"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
	"golang.org/x/sys/unix"
)

// This file is the sending half of a direction's forwarding loop: held
// frames written when due, in batches, and their lateness counted.

// sendDue writes every held frame whose due time is not after cutoff;
// now is the time, for the lateness figures.
func (l *dirLoop) sendDue(cutoff, now int64) error {
	line := &l.carry.Line
	for line.Len() > 0 && line.At(0).Due <= cutoff {
		k := 0
		for k < txBatch && k < line.Len() {
			e := line.At(k)
			if e.Due > cutoff {
				break
			}
			l.txIov[k].Base = &l.arena[int(e.Ref)*l.slot]
			l.txIov[k].SetLen(int(e.Size) + vnetHdrLen)
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
				// is full); count it and go on with the next.
				l.c.SendErrors++
				l.retire(now, false)
				sent++
				continue
			}
			for j := 0; j < int(r); j++ {
				l.retire(now, true)
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

// retire removes the head frame after it was written (or failed).
func (l *dirLoop) retire(now int64, ok bool) {
	e := l.carry.Depart()
	l.free = append(l.free, e.Ref)
	if ok {
		l.c.Forwarded++
		l.c.ForwardedBytes += uint64(e.Size)
		late := uint64(now - e.Due)
		l.c.LateNanos += late
		l.c.MaxLateNanos = max(l.c.MaxLateNanos, late)
		l.c.Late[linkspec.LateBucket(late)]++
	}
}
