package emulator

import (
	"fmt"
	"math"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/shakenfist/quicbench/shapedlink/internal/aqm"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkmodel"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
	"github.com/shakenfist/quicbench/shapedlink/internal/segment"
	"golang.org/x/sys/unix"
)

// This file is the forwarding loop of one direction: the frame buffers,
// the ring of held frames, and the read-judge-hold-write cycle with its
// sleeps and spins. Nothing here allocates once newDirLoop has returned.

// A held wire segment is a linkmodel.Held whose Ref is segRef(buf, seg):
// a whole frame as it arrived (seg 0), or one segment of a
// segmentation-offload super-packet (seg counts them from 0), in buffer
// buf. A duplicate is held under the same Ref (the bytes are shared) with
// its own Edit, which is made on a copy when the segment is sent.

// segRef is the Ref of segment seg of the frame in buffer buf, and
// bufSeg its inverse.
func segRef(buf, seg int32) int64 { return int64(buf) | int64(seg)<<32 }

func bufSeg(ref int64) (buf, seg int32) { return int32(ref), int32(ref >> 32) }

// bufState is what the loop knows of one frame buffer: how many held
// segments (or queued packets) refer to it, and the frame it holds, parsed
// into its wire segments; whole says it is sent as it arrived (not a
// super-packet, or one that cannot be cut).
type bufState struct {
	refs  int32
	whole bool
	f     segment.Frame
}

// dirLoop is one direction of the shaper: it reads from rx, holds frames
// per its Model, and writes them to tx when due. Everything it touches per
// frame is preallocated.
type dirLoop struct {
	model       *linkmodel.Model
	carry       *linkmodel.Carrier // the model and the line of held segments
	c           linkspec.Counters  // the model counts into it too
	rx, tx      int
	wake        int
	keep        bool // the devices keep their offloads (Config.KeepOffload)
	sh          *shmDir
	stop        *atomic.Bool
	spin        int64
	base        time.Time
	slot        int
	arena       []byte // (held limit + rxBatch) frame buffers, anonymous mmap
	free        []int32
	bufs        []bufState
	rxHdr       []unix.Mmsghdr
	rxIov       []unix.Iovec
	rxName      []unix.RawSockaddrLinklayer
	rxBuf       []int32
	rxCtl       []byte
	txHdr       []unix.Mmsghdr
	txIov       []unix.Iovec // two a message: headers (or a whole frame), then payload
	txScratch   []byte       // txBatch slots of slot+vnetHdrLen: a run's headers, or an edited segment
	txEntries   []int        // how many held segments each message carries
	pfd         []unix.PollFd
	lastSocket  int64
	lastArrival int64
	lastDrain   int64 // when a read last emptied the socket
	delay       int64
	window      int64 // Config.DepartureWindow
	// Spin budget: at most spinBudget of every spinWindow is spent
	// spinning, so a high packet rate degrades to timer wake-ups instead
	// of a thread that never sleeps.
	windowStart, windowSpin, lastSpin int64

	// With Config.LateMarker: the trace marker's file (-1: none), the
	// lateness that writes to it, whether it has been written, the
	// thread's id and room for the line.
	marker   int
	markLate int64
	marked   bool
	tid      int
	markBuf  []byte

	flowSeed uint32 // the queue discipline's flow hash seed
	// With FQ-CoDel: when the flow queues were last published, and room
	// to gather them.
	flowPub, lastFlowPub int64
	flowBuf              []aqm.FlowBacklog
}

func newDirLoop(d linkspec.Direction, keep bool, rx, tx, wake int, sh *shmDir, stop *atomic.Bool, spin int64, base time.Time) (*dirLoop, error) {
	limit := d.MaxHeld()
	nbuf := limit + rxBatch
	slot := bigSlot
	switch {
	case keep && nbuf*slot > maxArenaKeep:
		return nil, fmt.Errorf("a held limit of %d frames needs %d MiB of 64 KiB frame buffers, more than the %d MiB a shaper keeping offloads may map; lower the limit", limit, nbuf*slot>>20, maxArenaKeep>>20)
	case !keep && nbuf*slot > maxArena:
		slot = jumbo
	}
	arena, err := unix.Mmap(-1, 0, nbuf*slot, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		return nil, fmt.Errorf("allocating %d frame buffers of %d bytes: %w", nbuf, slot, err)
	}
	l := &dirLoop{
		delay: int64(d.Delay), rx: rx, tx: tx, wake: wake, sh: sh, stop: stop, spin: spin, base: base,
		slot: slot, arena: arena, keep: keep,
		free:      make([]int32, nbuf),
		bufs:      make([]bufState, nbuf),
		rxHdr:     make([]unix.Mmsghdr, rxBatch),
		rxIov:     make([]unix.Iovec, rxBatch),
		rxName:    make([]unix.RawSockaddrLinklayer, rxBatch),
		rxBuf:     make([]int32, rxBatch),
		rxCtl:     make([]byte, rxBatch*ctlLen),
		txHdr:     make([]unix.Mmsghdr, txBatch),
		txIov:     make([]unix.Iovec, 2*txBatch),
		txEntries: make([]int, txBatch),
		pfd:       []unix.PollFd{{Fd: int32(rx), Events: unix.POLLIN}, {Fd: int32(wake), Events: unix.POLLIN}},
		marker:    -1,
		markBuf:   make([]byte, 0, 128),
	}
	l.model = linkmodel.New(d, &l.c)
	l.carry = linkmodel.NewCarrier(l.model, limit, l)
	scratch, err := unix.Mmap(-1, 0, txBatch*(slot+vnetHdrLen), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS|unix.MAP_NORESERVE)
	if err != nil {
		_ = unix.Munmap(arena)
		return nil, fmt.Errorf("allocating the send scratch: %w", err)
	}
	l.txScratch = scratch
	for i := range l.free {
		l.free[i] = int32(nbuf - 1 - i)
	}
	if q := d.Queue; q.Kind == linkspec.FQCoDel {
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
	}
	for i := range l.rxHdr {
		l.rxHdr[i].Hdr.Name = (*byte)(unsafe.Pointer(&l.rxName[i]))
		l.rxHdr[i].Hdr.Iov = &l.rxIov[i]
		l.rxHdr[i].Hdr.SetIovlen(1)
	}
	for i := range l.txHdr {
		l.txHdr[i].Hdr.Iov = &l.txIov[2*i]
	}
	return l, nil
}

func (l *dirLoop) close() {
	if l.marker >= 0 {
		_ = unix.Close(l.marker)
	}
	_ = unix.Munmap(l.arena)
	_ = unix.Munmap(l.txScratch)
}

func (l *dirLoop) now() int64 { return int64(time.Since(l.base)) }

// housekeep publishes the flows' figures and reads the socket's drops
// when each is due.
func (l *dirLoop) housekeep(now int64) {
	if l.flowPub > 0 && now-l.lastFlowPub >= l.flowPub {
		l.lastFlowPub = now
		l.publishFlows()
	}
	if now-l.lastSocket > int64(100*time.Millisecond) {
		l.lastSocket = now
		l.readSocketDrops()
	}
}

func (l *dirLoop) run() error {
	l.tid = unix.Gettid()
	for !l.stop.Load() {
		now := l.now()
		if err := l.sendDue(l.cutoff(now), now); err != nil {
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
			l.carry.DequeueUpTo(l.lastDrain)
			now := l.now()
			if err := l.sendDue(l.cutoff(now), now); err != nil {
				return err
			}
		}
		now = l.now()
		l.housekeep(now)
		qnext, queued := l.model.NextDequeue()
		if l.carry.Line.Len() == 0 && !queued {
			// Idle: wake on the next arrival (its kernel timestamp makes
			// the wake-up latency harmless).
			// A scheduled change ends the wait so it is counted when due
			// (it applies to the arrivals' timestamps either way).
			if err := l.poll(max(0, min(int64(200*time.Millisecond), l.model.NextChange()-now)), true); err != nil {
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
		if l.carry.Line.Len() > 0 {
			due = l.carry.Line.At(0).Due
		}
		target := due
		watch := l.delay < minDefer
		if !watch {
			target = min(due, l.lastDrain+min(l.delay, maxDefer))
		}
		// Reads are not put off past a scheduled change, which may
		// shorten the delay the deferral relies on.
		target = min(target, l.model.NextChange())
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
			// frames may leave up to a quantum late (see linkspec.Counters.Late).
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

// cutoff is the latest due time that leaves at now: now itself, or, with
// a departure window and the head segment due, now plus the window.
func (l *dirLoop) cutoff(now int64) int64 {
	if l.window > 0 && l.carry.Line.Len() > 0 && l.carry.Line.At(0).Due <= now {
		return now + l.window
	}
	return now
}

// busy says whether the head frame is part of busy traffic: it waited in
// the rate queue, or the frame after it is due within busyQuantum of it.
// Spinning buys precision for sparse traffic (an idle round trip, however
// many such frames the delay line holds); on a busy link a timer's
// wake-up error is immaterial next to the queue, and the CPU is better
// left to the endpoints.
func (l *dirLoop) busy() bool {
	line := &l.carry.Line
	h := line.At(0)
	if h.Queued {
		return true
	}
	if line.Len() < 2 {
		return false
	}
	return line.At(1).Due-h.Due < busyQuantum
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

// markLateness writes the LateMarker line for a frame late by late ns,
// once per thread.
func (l *dirLoop) markLateness(late int64) {
	l.marked = true
	b := append(l.markBuf[:0], LateMarkerPrefix+" tid="...)
	b = strconv.AppendInt(b, int64(l.tid), 10)
	b = append(b, " late_ns="...)
	b = strconv.AppendInt(b, late, 10)
	b = append(b, '\n')
	_, _ = unix.Write(l.marker, b)
}

// flowSamples is how many of the fullest FQ-CoDel flow queues the shaper
// publishes for the queue sampler (Monitor.Flows).
const flowSamples = 8

// flowPublishEvery is how often the shaper publishes them.
const flowPublishEvery = 2 * time.Millisecond
