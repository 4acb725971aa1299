package emulator

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/shakenfist/quicbench/shapedlink/internal/aqm"
	"golang.org/x/sys/unix"
)

// This file is the forwarding loop of one direction: the frame buffers,
// the ring of held frames, and the read-judge-hold-write cycle with its
// sleeps and spins. Nothing here allocates once newDirLoop has returned.

type entry struct {
	buf  int32
	size int32
	due  int64
	// queued: the frame waited behind another one for the rate, so it is
	// part of a queue and a timer's wake-up error is immaterial to it.
	queued bool
}

// dirLoop is one direction of the shaper: it reads from rx, holds frames
// per its Model, and writes them to tx when due. Everything it touches per
// frame is preallocated.
type dirLoop struct {
	model       *Model
	rx, tx      int
	wake        int
	sh          *shmDir
	stop        *atomic.Bool
	spin        int64
	base        time.Time
	slot        int
	arena       []byte // (limit+rxBatch) frame buffers, anonymous mmap
	free        []int32
	ring        []entry
	head, n     int
	rxHdr       []unix.Mmsghdr
	rxIov       []unix.Iovec
	rxName      []unix.RawSockaddrLinklayer
	rxBuf       []int32
	rxCtl       []byte
	txHdr       []unix.Mmsghdr
	txIov       []unix.Iovec
	pfd         []unix.PollFd
	lastSocket  int64
	lastArrival int64
	lastDrain   int64 // when a read last emptied the socket
	delay       int64
	// Spin budget: at most spinBudget of every spinWindow is spent
	// spinning, so a high packet rate degrades to timer wake-ups instead
	// of a thread that never sleeps.
	windowStart, windowSpin, lastSpin int64

	// Local copies of the counters, published to sh after each batch.
	received, forwarded, fwdBytes  uint64
	loss, limit, oversize, sendErr uint64
	sockDrops, late, maxLate       uint64
	stamped, dups, reorders        uint64
	qdrops, codel, marks           uint64
	flowSeed                       uint32 // the queue discipline's flow hash seed
	// With FQ-CoDel: when the flow queues were last published, and room
	// to gather them.
	flowPub, lastFlowPub int64
	flowBuf              []aqm.FlowBacklog
	// The schedule (Direction.Schedule): its changes and period, the
	// global index of the next change (counting across periods) and its
	// time (math.MaxInt64 when none is left), and what was applied.
	sched                 []Change
	schedPeriod           int64
	nextChange            int64
	nextChangeAt          int64
	changes, maxChangeLag uint64
	blackout              uint64
	hist                  [LateBuckets]uint64
}

func newDirLoop(d Direction, rx, tx, wake int, sh *shmDir, stop *atomic.Bool, spin int64, base time.Time) (*dirLoop, error) {
	limit := d.maxScheduledLimit()
	nbuf := limit + rxBatch
	slot := bigSlot
	if nbuf*slot > maxArena {
		slot = jumbo
	}
	arena, err := unix.Mmap(-1, 0, nbuf*slot, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, fmt.Errorf("allocating %d frame buffers of %d bytes: %w", nbuf, slot, err)
	}
	l := &dirLoop{
		model: NewModel(d), delay: int64(d.Delay), rx: rx, tx: tx, wake: wake, sh: sh, stop: stop, spin: spin, base: base,
		slot: slot, arena: arena,
		free:   make([]int32, nbuf),
		ring:   make([]entry, limit),
		rxHdr:  make([]unix.Mmsghdr, rxBatch),
		rxIov:  make([]unix.Iovec, rxBatch),
		rxName: make([]unix.RawSockaddrLinklayer, rxBatch),
		rxBuf:  make([]int32, rxBatch),
		rxCtl:  make([]byte, rxBatch*ctlLen),
		txHdr:  make([]unix.Mmsghdr, txBatch),
		txIov:  make([]unix.Iovec, txBatch),
		pfd:    []unix.PollFd{{Fd: int32(rx), Events: unix.POLLIN}, {Fd: int32(wake), Events: unix.POLLIN}},
	}
	for i := range l.free {
		l.free[i] = int32(nbuf - 1 - i)
	}
	l.sched, l.schedPeriod = d.Schedule, int64(d.SchedulePeriod)
	l.nextChangeAt = l.changeTime(0)
	if q := d.Queue; q != nil && q.Kind == aqm.FQCoDel {
		// Room for every flow queue that can be non-empty at once.
		flows := q.Flows
		if flows == 0 {
			flows = aqm.DefaultFlows
		}
		l.flowPub = int64(flowPublishEvery)
		l.flowBuf = make([]aqm.FlowBacklog, 0, min(flows, d.Limit))
	}
	if l.model.HasQueue() {
		l.flowSeed = uint32(d.Seed>>32 ^ d.Seed)
		l.model.SetDropFunc(l.queueDrop)
	}
	for i := range l.rxHdr {
		l.rxHdr[i].Hdr.Name = (*byte)(unsafe.Pointer(&l.rxName[i]))
		l.rxHdr[i].Hdr.Iov = &l.rxIov[i]
		l.rxHdr[i].Hdr.SetIovlen(1)
	}
	for i := range l.txHdr {
		l.txHdr[i].Hdr.Iov = &l.txIov[i]
		l.txHdr[i].Hdr.SetIovlen(1)
	}
	return l, nil
}

func (l *dirLoop) close() { _ = unix.Munmap(l.arena) }

func (l *dirLoop) now() int64 { return int64(time.Since(l.base)) }

func (l *dirLoop) run() error {
	for !l.stop.Load() {
		now := l.now()
		if err := l.sendDue(now, now); err != nil {
			return err
		}
		n, err := l.recv()
		if err != nil {
			return err
		}
		if n > 0 {
			continue
		}
		// The socket is drained: the changes due by then apply to
		// whatever arrives later.
		l.applyChangesUpTo(l.lastDrain)
		if l.model.HasQueue() {
			// The socket is drained: every arrival up to lastDrain is
			// in the queue, so the link's choices up to then can be made.
			l.dequeueUpTo(l.lastDrain)
			now := l.now()
			if err := l.sendDue(now, now); err != nil {
				return err
			}
		}
		now = l.now()
		if l.flowPub > 0 && now-l.lastFlowPub >= l.flowPub {
			l.lastFlowPub = now
			l.publishFlows()
		}
		if now-l.lastSocket > int64(100*time.Millisecond) {
			l.lastSocket = now
			l.readSocketDrops()
		}
		qnext, queued := l.model.NextDequeue()
		if l.n == 0 && !queued {
			// Idle: wake on the next arrival (its kernel timestamp makes
			// the wake-up latency harmless).
			// A scheduled change ends the wait so it is counted when due
			// (it applies to the arrivals' timestamps either way).
			if err := l.poll(max(0, min(int64(200*time.Millisecond), l.nextChangeAt-now)), true); err != nil {
				return err
			}
			continue
		}
		// Frames are held. A frame that arrives now cannot be due before
		// now + delay, so the socket need not be watched: reading it in a
		// batch later, at the next due time or at most maxDefer after the
		// last time the socket was drained, changes nothing in the model
		// (arrivals carry their kernel timestamps and are replayed in
		// order). That turns one wake-up per arriving frame into one per
		// batch on a busy link.
		due := int64(math.MaxInt64)
		if l.n > 0 {
			due = l.ring[l.head].due
		}
		target := due
		watch := l.delay < minDefer
		if !watch {
			target = min(due, l.lastDrain+min(l.delay, maxDefer))
		}
		// Reads are not put off past a scheduled change, which may
		// shorten the delay the deferral relies on.
		target = min(target, l.nextChangeAt)
		if queued {
			// The link's next choice from the queue is made once the
			// arrivals up to it are read (a frame leaving the queue is
			// due a serialisation and the delay later, so the read may
			// wait for the batch like any other).
			target = min(target, qnext)
		}
		wait := target - now
		if wait <= 0 {
			continue
		}
		if queued || l.busy() {
			// Busy: no spinning, and no wake-up for less than a quantum;
			// frames may leave up to a quantum late (see DirStats.Late).
			wait = max(wait, busyQuantum)
		} else if l.spin > 0 && target == due && l.spinAllowed(now) {
			// (Spin only towards a frame's due time, never towards a
			// read deadline, which has no precision to buy.)
			if wait <= l.spin {
				// Spin: go round again, polling the socket without
				// sleeping, until the head frame is due.
				if l.lastSpin != 0 {
					l.windowSpin += now - l.lastSpin
				}
				l.lastSpin = now
				continue
			}
			wait -= l.spin
		}
		l.lastSpin = 0
		if err := l.poll(wait, watch); err != nil {
			return err
		}
	}
	return nil
}

// busy says whether the head frame is part of busy traffic: it waited in
// the rate queue, or the frame after it is due within busyQuantum of it.
// Spinning buys precision for sparse traffic (an idle round trip, however
// many such frames the delay line holds); on a busy link a timer's
// wake-up error is immaterial next to the queue, and the CPU is better
// left to the endpoints.
func (l *dirLoop) busy() bool {
	h := &l.ring[l.head]
	if h.queued {
		return true
	}
	if l.n < 2 {
		return false
	}
	next := l.head + 1
	if next == len(l.ring) {
		next = 0
	}
	return l.ring[next].due-h.due < busyQuantum
}

const (
	busyQuantum = int64(50 * time.Microsecond)
	minDefer    = int64(100 * time.Microsecond)
	maxDefer    = int64(500 * time.Microsecond) // bounds the socket's backlog
	spinWindow  = int64(10 * time.Millisecond)
	spinBudget  = spinWindow / 4
)

func (l *dirLoop) spinAllowed(now int64) bool {
	if now-l.windowStart >= spinWindow {
		l.windowStart, l.windowSpin = now, 0
	}
	return l.windowSpin < spinBudget
}

// poll sleeps for ns or until the loop is told to stop, and, if watchRx,
// until a frame arrives.
func (l *dirLoop) poll(ns int64, watchRx bool) error {
	ts := unix.NsecToTimespec(ns)
	l.pfd[0].Revents, l.pfd[1].Revents = 0, 0
	fds := l.pfd[1:]
	if watchRx {
		fds = l.pfd
	}
	// A raw system call: the goroutine keeps its P while it sleeps. With
	// unix.Ppoll the runtime's sysmon would take the P away after 20 us
	// and the thread would have to win one back on every wake-up; on a
	// busy link that churn (sysmon waking every 20 us, futex hand-offs)
	// cost more CPU than the forwarding itself. A signal (the runtime's
	// preemption or GC) interrupts the sleep with EINTR, so the runtime
	// can still stop the goroutine when it needs to.
	_, _, errno := unix.RawSyscall6(unix.SYS_PPOLL, uintptr(unsafe.Pointer(&fds[0])), uintptr(len(fds)), uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
	if errno != 0 && errno != unix.EINTR {
		return fmt.Errorf("ppoll: %w", errno)
	}
	return nil
}

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
		l.received++
		size := int(l.rxHdr[i].Len) - vnetHdrLen
		if l.rxHdr[i].Hdr.Flags&unix.MSG_TRUNC != 0 || size+vnetHdrLen > l.slot || size <= 0 {
			l.oversize++
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
			switch l.model.Enqueue(at, aqm.Packet{Len: size, Flow: flow, ECT: ect, Ref: b}) {
			case Lost:
				l.loss++
				l.free = append(l.free, b)
			case OverLimit:
				l.limit++
				l.free = append(l.free, b)
			}
			continue
		}
		due, v := l.model.Arrive(at, size)
		if ddue, dv, dq, dr, ok := l.model.Duplicate(); ok {
			l.dups++
			// Only an accepted duplicate gets a buffer: the model then
			// counts it among the frames held, which the buffers are
			// sized for (a refused one, copied first, could find none).
			c := noBuffer
			if dv == Accepted {
				c = l.copyFrame(b, size)
			}
			l.judged(ddue, dv, dq, dr, c, size)
		}
		l.judged(due, v, l.model.Queued(), l.model.Reordered(), b, size)
	}
	l.publishRx()
	return n, nil
}

// judged acts on the model's verdict for a frame in buffer b: count and
// free it, or hold it in the ring in due order. The ring is kept sorted by
// due time with ties in arrival order, as netem's tfifo is: with a rate
// every frame goes to the tail, and only a reordered frame (due at once)
// or, with no rate, jittered ones move forward.
func (l *dirLoop) judged(due int64, v Verdict, queued, reordered bool, b int32, size int) {
	switch v {
	case Lost:
		l.loss++
		l.release(b)
		return
	case OverLimit:
		l.limit++
		l.release(b)
		return
	case Blackout:
		l.blackout++
		l.release(b)
		return
	}
	if reordered {
		l.reorders++
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
		if marked {
			aqm.SetCE(l.frame(p.Ref, p.Len))
			l.marks++
		}
		l.judged(due, Accepted, queued, false, p.Ref, p.Len)
	}
}

// queueDrop frees a frame the queue discipline dropped and counts it.
func (l *dirLoop) queueDrop(ref int32, _ int, c aqm.Cause) {
	l.free = append(l.free, ref)
	if c == aqm.CoDelDrop {
		l.codel++
	} else {
		l.qdrops++
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

func (l *dirLoop) publishRx() {
	p, b := l.model.Held()
	l.sh.packets.Store(uint64(p))
	l.sh.bytes.Store(uint64(b))
	l.sh.received.Store(l.received)
	l.sh.lossDrops.Store(l.loss)
	l.sh.limitDrops.Store(l.limit)
	l.sh.oversizeDrops.Store(l.oversize)
	l.sh.stamped.Store(l.stamped)
	l.sh.duplicates.Store(l.dups)
	l.sh.reorders.Store(l.reorders)
	l.sh.queueDrops.Store(l.qdrops)
	l.sh.codelDrops.Store(l.codel)
	l.sh.marks.Store(l.marks)
	l.sh.blackout.Store(l.blackout)
	if l.model.HasQueue() {
		q, _ := l.model.QueueLen()
		l.sh.queued.Store(uint64(q))
	}
}

// sendDue writes every held frame whose due time is not after cutoff;
// now is the time, for the lateness figures.
func (l *dirLoop) sendDue(cutoff, now int64) error {
	for l.n > 0 && l.ring[l.head].due <= cutoff {
		k := 0
		for k < txBatch && k < l.n {
			idx := l.head + k
			if idx >= len(l.ring) {
				idx -= len(l.ring)
			}
			e := &l.ring[idx]
			if e.due > cutoff {
				break
			}
			l.txIov[k].Base = &l.arena[int(e.buf)*l.slot]
			l.txIov[k].SetLen(int(e.size) + vnetHdrLen)
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
				l.sendErr++
				l.retire(now, false)
				sent++
				continue
			}
			for j := 0; j < int(r); j++ {
				l.retire(now, true)
			}
			sent += int(r)
		}
		l.publishTx()
		if sent < k {
			return nil
		}
	}
	return nil
}

// retire removes the head frame after it was written (or failed).
func (l *dirLoop) retire(now int64, ok bool) {
	e := l.ring[l.head]
	l.head++
	if l.head == len(l.ring) {
		l.head = 0
	}
	l.n--
	l.model.Depart(int(e.size))
	l.free = append(l.free, e.buf)
	if ok {
		l.forwarded++
		l.fwdBytes += uint64(e.size)
		late := uint64(now - e.due)
		l.late += late
		if late > l.maxLate {
			l.maxLate = late
		}
		b := LateBucket(late)
		l.hist[b]++
		l.sh.late[b].Store(l.hist[b])
	}
}

func (l *dirLoop) publishTx() {
	p, b := l.model.Held()
	l.sh.packets.Store(uint64(p))
	l.sh.bytes.Store(uint64(b))
	l.sh.forwarded.Store(l.forwarded)
	l.sh.fwdBytes.Store(l.fwdBytes)
	l.sh.sendErrors.Store(l.sendErr)
	l.sh.lateNanos.Store(l.late)
	l.sh.maxLate.Store(l.maxLate)
}

// FlowSamples is how many of the fullest FQ-CoDel flow queues the shaper
// publishes for the queue sampler (Monitor.Flows).
const FlowSamples = 8

// flowPublishEvery is how often the shaper publishes them.
const flowPublishEvery = 2 * time.Millisecond

// changeTime is when the schedule's k-th change (counting across
// periods) is due, or math.MaxInt64 if there is none.
func (l *dirLoop) changeTime(k int64) int64 {
	n := int64(len(l.sched))
	if n == 0 || l.schedPeriod == 0 && k >= n {
		return math.MaxInt64
	}
	return k/n*l.schedPeriod + int64(l.sched[k%n].At)
}

// applyChangesUpTo applies every scheduled change due at or before t.
func (l *dirLoop) applyChangesUpTo(t int64) {
	for l.nextChangeAt <= t {
		n := int64(len(l.sched))
		c := l.sched[l.nextChange%n]
		switch c.Set {
		case "rate":
			l.model.SetRate(uint64(math.Round(c.Value * 1e6)))
		case "delay":
			d := time.Duration(math.Round(c.Value * 1e6))
			l.model.SetDelay(d)
			l.delay = int64(d)
		case "loss":
			l.model.SetLoss(c.Value)
		case "limit":
			l.model.SetLimit(int(c.Value))
		case "down":
			upAt := int64(math.MaxInt64)
			for j := l.nextChange + 1; j <= l.nextChange+n; j++ {
				at := l.changeTime(j)
				if at == math.MaxInt64 {
					break
				}
				if l.sched[j%n].Set == "up" {
					upAt = at
					break
				}
			}
			l.model.SetDown(c.Hold, upAt)
		case "up":
			l.model.SetUp()
		}
		if lag := l.now() - l.nextChangeAt; lag > 0 {
			l.maxChangeLag = max(l.maxChangeLag, uint64(lag))
		}
		l.changes++
		l.sh.changes.Store(l.changes)
		l.sh.maxChangeLag.Store(l.maxChangeLag)
		l.nextChange++
		l.nextChangeAt = l.changeTime(l.nextChange)
	}
}
