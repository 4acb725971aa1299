package emulator

import (
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"github.com/shakenfist/quicbench/shapedlink/internal/aqm"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
	"golang.org/x/sys/unix"
)

// The shared page between Monitor (parent) and the shaper (child). Every
// word is read and written with sync/atomic; the child is the only writer
// of counters and state, the parent only reads.
const (
	shmSize    = 8192
	shmMagic   = 0x71626d756c617431 // "qbmulat1"
	errMsgSize = 1024
)

const (
	stateStarting uint64 = iota
	stateReady
	stateFailed
	stateStopped
)

type shmDir struct {
	// counters is linkspec.Counters word for word, published by the
	// shaper after each batch (publish) and read by the parent (load).
	counters [linkspec.CounterWords]atomic.Uint64
	// With FQ-CoDel: the fullest flow queues (flowSamples of them, by
	// bytes), published every flowPublishEvery under a sequence count
	// (odd while being written).
	flowSeq, flowN atomic.Uint64
	flows          [flowSamples]struct{ index, packets, bytes atomic.Uint64 }
}

// publish stores c for the parent, word by word (a reader may see some
// words of this batch and some of the last; each word is whole).
func (d *shmDir) publish(c *linkspec.Counters) {
	for i, w := range c.Words() {
		d.counters[i].Store(w)
	}
}

// load reads the counters the shaper published.
func (d *shmDir) load() linkspec.Counters {
	var c linkspec.Counters
	w := c.Words()
	for i := range w {
		w[i] = d.counters[i].Load()
	}
	return c
}

// storeFlows publishes fl (at most flowSamples entries) for the parent.
func (d *shmDir) storeFlows(fl []aqm.FlowBacklog) {
	d.flowSeq.Add(1)
	for i, f := range fl {
		d.flows[i].index.Store(uint64(f.Index))
		d.flows[i].packets.Store(uint64(f.Packets))
		d.flows[i].bytes.Store(uint64(f.Bytes))
	}
	d.flowN.Store(uint64(len(fl)))
	d.flowSeq.Add(1)
}

// loadFlows reads what storeFlows published into dst[:0], retrying while
// a write is under way; ok is false if no consistent copy was read in a
// few tries.
func (d *shmDir) loadFlows(dst []aqm.FlowBacklog) (out []aqm.FlowBacklog, ok bool) {
	for range 16 {
		s := d.flowSeq.Load()
		if s&1 == 1 {
			continue
		}
		out = dst[:0]
		n := min(d.flowN.Load(), flowSamples)
		for i := range n {
			out = append(out, aqm.FlowBacklog{Index: int(d.flows[i].index.Load()), Packets: int(d.flows[i].packets.Load()), Bytes: int64(d.flows[i].bytes.Load())})
		}
		if d.flowSeq.Load() == s {
			return out, true
		}
	}
	return dst[:0], false
}

type shmLayout struct {
	magic  atomic.Uint64
	state  atomic.Uint64
	pid    atomic.Uint64
	errLen atomic.Uint64
	// niceErr is the errno of a failed setpriority (0: applied or not asked).
	niceErr atomic.Uint64
	// rtErr is the errno of a failed sched_setscheduler (0: applied or not asked).
	rtErr atomic.Uint64
	// base is the forwarding threads' time zero (unix ns): the schedule's
	// and the trace's times count from it.
	base atomic.Uint64
	// mlockMode is lockMemory's outcome (mlockNone, mlockAll,
	// mlockFaults) and mlockErr the errno of a failed mlockall.
	mlockMode, mlockErr atomic.Uint64
	// gcCycles and gcPauseMaxNs are the garbage collections since the
	// forwarding threads started and the longest pause of any (an upper
	// bound), published every gcPublishEvery; gcValid is 1 once they are.
	gcCycles, gcPauseMaxNs, gcValid atomic.Uint64
	dirs                            [2]shmDir
	errMsg                          [errMsgSize]byte
}

func init() {
	// A compile-time-ish guard: the layout must fit the page.
	if unsafe.Sizeof(shmLayout{}) > shmSize {
		panic("emulator: shared layout larger than its page")
	}
}

// setError records msg for the parent (child side) and marks the state
// failed. The message is written before the state, so a parent that sees
// stateFailed sees the whole message.
func (s *shmLayout) setError(msg string) {
	n := copy(s.errMsg[:], msg)
	s.errLen.Store(uint64(n))
	s.state.Store(stateFailed)
}

func (s *shmLayout) errorText() string {
	n := s.errLen.Load()
	if n > errMsgSize {
		n = errMsgSize
	}
	return string(s.errMsg[:n])
}

// newSharedPage creates the memfd and maps it (parent side).
func newSharedPage() (*os.File, []byte, *shmLayout, error) {
	fd, err := unix.MemfdCreate("quicbench-emulator", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("emulator: memfd_create for the shared counters: %w", err)
	}
	f := os.NewFile(uintptr(fd), "quicbench-emulator-shm")
	if err := unix.Ftruncate(fd, shmSize); err != nil {
		f.Close()
		return nil, nil, nil, fmt.Errorf("emulator: sizing the shared counters: %w", err)
	}
	mem, lay, err := mapShared(fd)
	if err != nil {
		f.Close()
		return nil, nil, nil, err
	}
	lay.magic.Store(shmMagic)
	return f, mem, lay, nil
}

func mapShared(fd int) ([]byte, *shmLayout, error) {
	mem, err := unix.Mmap(fd, 0, shmSize, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, fmt.Errorf("emulator: mapping the shared counters: %w", err)
	}
	return mem, (*shmLayout)(unsafe.Pointer(&mem[0])), nil
}
