package shapedlink

import (
	"fmt"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ProbeWake measures how late this host wakes a thread for its timer,
// the first time it is called in the process, and returns that probe
// every time (Options.EmulatorKeepAwakeAuto decides by it): wakeSleeps
// sleeps to a deadline, each wakeSleep long, on a locked thread with the
// emulator's timer slack (1 ns) and, where allowed, its SCHED_FIFO
// priority, waiting as the emulator's threads wait (a raw ppoll). Call it
// with the CPUs otherwise idle: it is what the emulator meets on a link
// with little traffic. It takes about 0.35 s.
func ProbeWake() (WakeProbe, error) {
	wakeOnce.once.Do(func() { wakeOnce.probe, wakeOnce.err = probeWake() })
	return wakeOnce.probe, wakeOnce.err
}

// probeWake is ProbeWake's probe, taken afresh.
func probeWake() (WakeProbe, error) {
	type result struct {
		late  []time.Duration
		sched string
		err   error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		// Never unlocked: the thread's slack and policy go with it when
		// the goroutine ends.
		runtime.LockOSThread()
		late, sched, err := probeThread()
		done <- result{late, sched, err}
	}()
	r := <-done
	if r.err != nil {
		return WakeProbe{}, r.err
	}
	return newWakeProbe(r.late, wakeSleep, r.sched, time.Since(start)), nil
}

// probeThread sets the calling (locked) thread up as the emulator's and
// sleeps wakeSleeps times, returning each wake-up's lateness.
func probeThread() ([]time.Duration, string, error) {
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	sched := "SCHED_FIFO 1"
	prio := struct{ p int32 }{1}
	if _, _, e := unix.RawSyscall(unix.SYS_SCHED_SETSCHEDULER, 0, unix.SCHED_FIFO, uintptr(unsafe.Pointer(&prio))); e != 0 {
		sched = fmt.Sprintf("SCHED_OTHER (asked for SCHED_FIFO 1: %v)", e)
	}
	late := make([]time.Duration, 0, wakeSleeps)
	for range wakeSleeps {
		deadline := time.Now().Add(wakeSleep)
		for {
			left := time.Until(deadline)
			if left <= 0 {
				break
			}
			ts := unix.NsecToTimespec(int64(left))
			_, _, e := unix.RawSyscall6(unix.SYS_PPOLL, 0, 0, uintptr(unsafe.Pointer(&ts)), 0, 0, 0)
			if e != 0 && e != unix.EINTR {
				return nil, "", fmt.Errorf("shapedlink: probing timer wake-ups: ppoll: %w", e)
			}
		}
		late = append(late, time.Since(deadline))
	}
	return late, sched, nil
}

// wakeOnce holds the process's one probe.
var wakeOnce struct {
	once  sync.Once
	probe WakeProbe
	err   error
}
