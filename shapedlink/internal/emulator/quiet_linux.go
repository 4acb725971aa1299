package emulator

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"

	"golang.org/x/sys/unix"
)

// This file keeps the shaper's own runtime out of the forwarding
// threads' way once they run: the garbage collector off, the process's
// memory locked, and the collector's record since then.

// memoryLimit is the backstop that lets the collector run again if the
// shaper's Go heap ever grows this large with collection off.
const memoryLimit = 512 << 20

// lockAllMax is the most frame buffer memory faulted in up front: with
// more than this mapped, buffer pages are locked as they are first
// touched, so a large held limit costs only what it uses.
const lockAllMax = 256 << 20

// Outcomes of lockMemory, as published on the shared page (mlockMode).
const (
	mlockNone   = 0 // not tried (or failed: see mlockErr)
	mlockAll    = 1 // memory in use and the frame buffers, faulted in
	mlockFaults = 2 // memory in use, and the frame buffers as touched
)

// quietRuntime collects once and turns the collector off, with
// memoryLimit as a backstop. It returns a function that restores what
// was in force (for tests).
func quietRuntime() (restore func()) {
	runtime.GC()
	pct := debug.SetGCPercent(-1)
	lim := debug.SetMemoryLimit(memoryLimit)
	return func() {
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(lim)
	}
}

// lockMemory locks the process's memory, present and future
// (mlockall(MCL_CURRENT|MCL_FUTURE)), each page as it is touched
// (MCL_ONFAULT: the runtime's reserved but unused memory is not faulted
// in), and then touches every page of bufs, the frame buffers, if
// together they are at most lockAllMax. It returns the mode applied and
// the errno of a failure.
func lockMemory(bufs [][]byte) (mode uint64, errno unix.Errno) {
	if err := unix.Mlockall(unix.MCL_CURRENT | unix.MCL_FUTURE | unix.MCL_ONFAULT); err != nil {
		e, _ := err.(unix.Errno)
		if e == 0 {
			e = unix.EINVAL
		}
		return mlockNone, e
	}
	total := 0
	for _, b := range bufs {
		total += len(b)
	}
	if total > lockAllMax {
		return mlockFaults, 0
	}
	page := unix.Getpagesize()
	for _, b := range bufs {
		for i := 0; i < len(b); i += page {
			b[i] = 0
		}
	}
	return mlockAll, 0
}

// gcWatch reads the collector's record (runtime/metrics) against the
// one when it was made; read allocates nothing after the first call.
type gcWatch struct {
	s         []metrics.Sample
	cycles0   uint64
	pauses0   []uint64
	cyclesNow uint64
	pauseMax  float64 // seconds
}

const (
	metricGCCycles = "/gc/cycles/total:gc-cycles"
	metricGCPauses = "/sched/pauses/total/gc:seconds"
)

func newGCWatch() *gcWatch {
	w := &gcWatch{s: []metrics.Sample{{Name: metricGCCycles}, {Name: metricGCPauses}}}
	metrics.Read(w.s)
	w.cycles0 = w.s[0].Value.Uint64()
	w.pauses0 = append([]uint64(nil), w.s[1].Value.Float64Histogram().Counts...)
	return w
}

// read updates the cycles and the longest pause since the watch was
// made: the upper edge of the highest histogram bucket that has gained a
// count (the largest finite edge below it for the open last bucket).
func (w *gcWatch) read() (cycles uint64, pauseMaxNs uint64) {
	metrics.Read(w.s)
	w.cyclesNow = w.s[0].Value.Uint64() - w.cycles0
	h := w.s[1].Value.Float64Histogram()
	for i := len(h.Counts) - 1; i >= 0; i-- {
		if i < len(w.pauses0) && h.Counts[i] > w.pauses0[i] {
			hi := h.Buckets[i+1]
			if math.IsInf(hi, 1) {
				hi = h.Buckets[i]
			}
			w.pauseMax = hi
			break
		}
	}
	return w.cyclesNow, uint64(w.pauseMax * 1e9)
}
