package shapedlinktest

import (
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"testing/cryptotest"
)

// DeterministicHeadroom is how far above the heap in use Deterministic
// sets the process's memory limit while the collector is off, when no
// limit is set already (GOMEMLIMIT or debug.SetMemoryLimit).
const DeterministicHeadroom = 1 << 30

// Deterministic makes the rest of test t repeatable in a testing/synctest
// bubble: run again in the same binary with the same seeds and the same
// writes, an in-process link (Sim) sees the same packets at the same
// virtual times, and so do the endpoints. Until t ends, when it restores
// each, it
//
//   - gives the process one P (runtime.GOMAXPROCS(1)), so goroutines that
//     act at the same virtual instant take turns in the scheduler's
//     order;
//   - seeds crypto/rand with seed (testing/cryptotest.SetGlobalRandom),
//     so quic-go's connection IDs, packet number skips and TLS keys
//     repeat;
//   - collects garbage once and then stops the collector
//     (debug.SetGCPercent(-1)), whose work preempts goroutines at
//     moments of the wall clock, with a memory limit as a safety net:
//     the heap in use plus DeterministicHeadroom, or the limit already
//     set. If the collector ran all the same (the limit was reached, or
//     something called runtime.GC), the test fails when it ends, saying
//     so.
//
// What it cannot stop is the scheduler preempting a goroutine that has
// run for 10 ms of wall time, which on a busy machine can reorder
// goroutines and so change a run; docs/virtual-time.md says what is
// guaranteed.
//
// All three settings are the whole process's, so Deterministic fails the
// test if it or a parent called t.Parallel, and t.Parallel fails after
// it. Call it at the start of the test, inside or outside synctest.Test.
func Deterministic(t *testing.T, seed uint64) {
	t.Helper()
	if err := seedCrypto(t, seed); err != nil {
		t.Fatalf("shapedlinktest.Deterministic: %v", err)
	}
	procs := runtime.GOMAXPROCS(1)
	t.Cleanup(func() { runtime.GOMAXPROCS(procs) })

	runtime.GC()
	oldLimit := debug.SetMemoryLimit(-1) // a negative limit only reads it
	limit := oldLimit
	if limit == math.MaxInt64 {
		var mem runtime.MemStats
		runtime.ReadMemStats(&mem)
		limit = int64(mem.HeapInuse) + DeterministicHeadroom
	}
	debug.SetMemoryLimit(limit)
	percent := debug.SetGCPercent(-1)
	before := gcCycles()
	t.Cleanup(func() {
		ran := gcCycles() - before
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(oldLimit)
		if ran > 0 {
			t.Errorf("shapedlinktest.Deterministic: the garbage collector ran %d times during the test "+
				"(the heap reached the memory limit, %d MiB, or something called runtime.GC), so the run may not repeat: "+
				"make the test smaller, or set GOMEMLIMIT above what it needs", ran, limit>>20)
		}
	})
}

// seedCrypto seeds crypto/rand for t, or says why it cannot: t, or a
// parent, is parallel.
func seedCrypto(t *testing.T, seed uint64) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v: one P, the stopped collector and crypto/rand's seed are the whole process's, "+
				"so the test must not run beside others: drop t.Parallel from it and its parents", p)
		}
	}()
	cryptotest.SetGlobalRandom(t, seed)
	return nil
}

// gcCycles is the number of garbage collections the process has completed.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
