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

// deterministicHeadroom is how far above the heap in use Deterministic
// sets the process's memory limit while the collector is off, when no
// limit is set already (GOMEMLIMIT or debug.SetMemoryLimit).
const deterministicHeadroom = 1 << 30

// Deterministic makes the rest of test t repeatable in a testing/synctest
// bubble: run again in the same binary with the same seeds and the same
// writes, an in-process link (Sim) sees the same packets at the same
// virtual times, and so do the endpoints. Until t ends, when it restores
// each, it gives the process one P (runtime.GOMAXPROCS(1)), seeds
// crypto/rand with seed (testing/cryptotest.SetGlobalRandom), and stops
// the garbage collector after one collection, with a memory limit of the
// heap in use plus 1 GiB (or the limit already set); if the collector ran
// all the same, the test fails when it ends.
// docs/virtual-time.md says what is guaranteed and what is not.
//
// The settings are the whole process's, so Deterministic fails the test
// if it or a parent called t.Parallel, and t.Parallel fails after it.
// Call it at the start of the test, inside or outside synctest.Test.
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
		limit = int64(mem.HeapInuse) + deterministicHeadroom
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
