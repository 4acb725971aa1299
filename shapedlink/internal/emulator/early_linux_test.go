package emulator

import (
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestDepartureWindowNeverEarly drives a direction's sending with an
// injected clock: three ping-sized frames arrive 30 us apart on an idle
// 10 Mbit/s link (a prober woken late sends its probes back to back), so
// the second and third wait in the rate queue behind the first. With a
// 200 us departure window, stepping the clock from the first's due time,
// no frame may leave before it would have been due on an idle link (its
// arrival, the delay and its own serialisation): that is a round trip
// shorter than the link's. Each frame is written to a socket, as the
// loop writes it, and counted as it is read back.
func TestDepartureWindowNeverEarly(t *testing.T) {
	const us = int64(time.Microsecond)
	d := Direction{Delay: 10 * time.Millisecond, RateMbit: 10, Limit: 100}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fds[0])
	defer unix.Close(fds[1])
	var stop atomic.Bool
	l, err := newDirLoop(d, false, -1, fds[0], -1, &shmDir{}, &stop, 0, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	l.window = 200 * us
	const size = 98
	arrivals := []int64{0, 30 * us, 60 * us}
	for _, at := range arrivals {
		b := l.free[len(l.free)-1]
		l.free = l.free[:len(l.free)-1]
		l.arrive(at, true, b, size)
	}
	idleDue := func(i int) int64 {
		return arrivals[i] + int64(d.Delay) + int64(size*8*1_000_000_000/int(d.RateMbit*1e6))
	}
	sent := 0
	buf := make([]byte, 2048)
	for now := idleDue(0); sent < len(arrivals) && now < idleDue(0)+time.Millisecond.Nanoseconds(); now += 5 * us {
		if err := l.sendDue(l.cutoff(now), now); err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := unix.Read(fds[1], buf); err != nil {
				break
			}
			if now < idleDue(sent) {
				t.Errorf("frame %d left %d us before its arrival, the delay and its serialisation had passed (a round trip shorter than the link's)", sent, (idleDue(sent)-now)/us)
			}
			sent++
		}
	}
	if sent != len(arrivals) {
		t.Errorf("%d of %d frames left within a millisecond of their due time", sent, len(arrivals))
	}
	if l.c.Early == 0 {
		t.Errorf("no frame left ahead of its due time: the departure window did not send the queued frames early")
	}
}
