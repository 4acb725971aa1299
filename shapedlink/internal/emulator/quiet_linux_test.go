package emulator

import (
	"runtime"
	"testing"
)

var allocSink []byte

// churn allocates n MiB of garbage in 64 KiB pieces.
func churn(n int) {
	for range n * 16 {
		allocSink = make([]byte, 64<<10)
	}
	allocSink = nil
}

// TestQuietRuntimeStopsGC: allocating 64 MiB collects (the control, with
// the collector as the test starts) and, with quietRuntime in force, does
// not; gcWatch sees the control's cycles and a pause.
func TestQuietRuntimeStopsGC(t *testing.T) {
	runtime.GC()
	ctl := newGCWatch()
	churn(64)
	cycles, pause := ctl.read()
	if cycles == 0 || pause == 0 {
		t.Fatalf("the control: 64 MiB allocated with the collector on, gcWatch saw %d cycles and a longest pause of %d ns; want some of both", cycles, pause)
	}
	restore := quietRuntime()
	defer restore()
	w := newGCWatch()
	churn(64)
	if cycles, pause := w.read(); cycles != 0 || pause != 0 {
		t.Errorf("with quietRuntime, 64 MiB allocated ran %d collections (longest pause %d ns); want none", cycles, pause)
	}
}

// TestGCWatchReadAllocatesNothing: the shaper reads its record every
// 100 ms with the collector off, so a read must not allocate.
func TestGCWatchReadAllocatesNothing(t *testing.T) {
	w := newGCWatch()
	w.read()
	if n := testing.AllocsPerRun(100, func() { w.read() }); n != 0 {
		t.Errorf("gcWatch.read allocates %v times a call; want 0", n)
	}
}
