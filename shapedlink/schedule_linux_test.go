package shapedlink

import (
	"encoding/binary"
	"net"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// stamped is what sendStamped saw of one datagram: the send call's start
// and end (the frame reached the link between the two) and the kernel's
// receive timestamp at the receiving socket (zero if it never came).
type stamped struct {
	sentFrom, sentTo, got time.Time
}

// sendStamped sends n numbered datagrams of size bytes from srv to cli,
// gap apart, and returns each one's stamps, waiting tail after the last
// for stragglers. Arrivals are stamped by the kernel (SO_TIMESTAMPNS) as
// the link delivers them, so how late the reading goroutine runs on a
// busy machine does not move them.
func sendStamped(t *testing.T, srv, cli *net.UDPConn, n int, gap time.Duration, size int, tail time.Duration) []stamped {
	t.Helper()
	out := make([]stamped, n)
	_ = cli.SetReadBuffer(8 << 20)
	stampReceives(t, cli)
	done := make(chan struct{})
	unstamped := 0
	go func() {
		defer close(done)
		buf, oob := make([]byte, 2048), make([]byte, 128)
		for {
			k, oobn, _, _, err := cli.ReadMsgUDP(buf, oob)
			if err != nil {
				return
			}
			i := int(binary.BigEndian.Uint32(buf))
			if k < 4 || i >= n || !out[i].got.IsZero() {
				continue
			}
			if out[i].got = kernelStamp(oob[:oobn]); out[i].got.IsZero() {
				unstamped++
				out[i].got = time.Now()
			}
		}
	}()
	msg := make([]byte, size)
	start := time.Now()
	to := cli.LocalAddr().(*net.UDPAddr)
	for i := range n {
		time.Sleep(time.Until(start.Add(time.Duration(i) * gap)))
		binary.BigEndian.PutUint32(msg, uint32(i))
		out[i].sentFrom = time.Now()
		if _, err := srv.WriteToUDP(msg, to); err != nil {
			t.Fatal(err)
		}
		out[i].sentTo = time.Now()
	}
	time.Sleep(tail)
	cli.Close()
	<-done
	if unstamped > 0 {
		t.Errorf("%d datagrams came without the kernel's receive timestamp; their times are when they were read", unstamped)
	}
	return out
}

// stampReceives has the kernel stamp each datagram cli receives
// (SO_TIMESTAMPNS), for kernelStamp to read.
func stampReceives(t *testing.T, cli *net.UDPConn) {
	t.Helper()
	rc, err := cli.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	}); err != nil || serr != nil {
		t.Fatalf("SO_TIMESTAMPNS on the receiving socket: %v %v", err, serr)
	}
}

// kernelStamp is the SCM_TIMESTAMPNS time in a datagram's control
// messages, or the zero Time.
func kernelStamp(oob []byte) time.Time {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return time.Time{}
	}
	for _, m := range msgs {
		if m.Header.Level == unix.SOL_SOCKET && m.Header.Type == unix.SCM_TIMESTAMPNS && len(m.Data) >= int(unsafe.Sizeof(unix.Timespec{})) {
			ts := *(*unix.Timespec)(unsafe.Pointer(&m.Data[0]))
			return time.Unix(ts.Unix())
		}
	}
	return time.Time{}
}

// TestScheduleBlackoutEmulator: blackout:300ms/4s takes the link down 2 s
// after its schedule starts, for 300 ms. Of datagrams sent every 2 ms
// until 2.8 s after the start (however long the link took to come up),
// every one sent more than 1 ms inside the blackout is lost and every one
// sent more than 1 ms outside it arrives; the shaper counts the lost ones
// as blackout drops and drops nothing else, so the change itself costs
// no packet. With hold, nothing is lost and what was sent while down
// arrives after the link is back up.
func TestScheduleBlackoutEmulator(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two links for 3.3 s each")
	}
	for _, hold := range []bool{false, true} {
		spec := "blackout:300ms/4s"
		if hold {
			spec += "/hold"
		}
		// A limit that holds everything sent during the blackout.
		l := newTestLink(t, "20:10@1000,down.schedule="+spec, BackendEmulator)
		start := l.Instruments().ScheduleStart()
		if start.IsZero() {
			t.Fatal("ScheduleStart is zero on a link with a schedule")
		}
		down, up := start.Add(2*time.Second), start.Add(2300*time.Millisecond)
		srv, cli := udpPair(t, l)
		// Sending ends 2.8 s in, whenever it began, so the run covers the
		// blackout and 500 ms after it, and never reaches the next one, at 6 s.
		n := int(time.Until(start.Add(2800*time.Millisecond)) / (2 * time.Millisecond))
		if n < 400 {
			t.Fatalf("the link took %v to come up; the blackout at 2 s would be nearly over before sending began", time.Since(start))
		}
		dgs := sendStamped(t, srv, cli, n, 2*time.Millisecond, 64, 500*time.Millisecond)
		if last := dgs[len(dgs)-1].sentTo.Sub(start); last > 5900*time.Millisecond {
			t.Fatalf("the last datagram left %v after the schedule's start; the second blackout, at 6 s, would be in the run", last)
		}
		lost, inside := 0, 0
		for i, d := range dgs {
			// The frame reached the link between the send call's start
			// and end, so it is known to be inside (or outside) only
			// when the whole call was.
			in := !d.sentFrom.Before(down.Add(time.Millisecond)) && d.sentTo.Before(up.Add(-time.Millisecond))
			out := d.sentTo.Before(down.Add(-time.Millisecond)) || !d.sentFrom.Before(up.Add(time.Millisecond))
			s, got := d.sentFrom, d.got
			if got.IsZero() {
				lost++
			}
			if in {
				inside++
			}
			switch {
			case hold && got.IsZero():
				t.Errorf("hold: datagram %d (sent %v after the start) was lost", i, s.Sub(start))
			case hold && in && got.Before(up.Add(10*time.Millisecond)):
				t.Errorf("hold: datagram %d sent %v into the blackout arrived %v before the link was back up plus the delay", i, s.Sub(down), up.Add(10*time.Millisecond).Sub(got))
			case !hold && in && !got.IsZero():
				t.Errorf("drop: datagram %d sent %v into the blackout arrived", i, s.Sub(down))
			case !hold && out && got.IsZero():
				t.Errorf("drop: datagram %d sent %v after the start, outside the blackout, was lost", i, s.Sub(start))
			}
		}
		sh, _ := l.Instruments().ShaperStats()
		d := sh.Directions[0]
		t.Logf("hold %v: %d of %d lost (%d sent well inside); shaper: %d blackout drops, %d changes, max lag %.3f ms", hold, lost, len(dgs), inside, d.BlackoutDrops, d.Changes, d.MaxChangeLagMs)
		if inside < 140 {
			t.Errorf("only %d datagrams sent inside the blackout; the test needs about 150", inside)
		}
		if want := uint64(lost); d.BlackoutDrops != want || d.LossDrops+d.LimitDrops+d.SocketDrops != 0 {
			t.Errorf("shaper: %d blackout drops (want %d, the datagrams lost), %d loss, %d limit, %d socket drops (want none)", d.BlackoutDrops, want, d.LossDrops, d.LimitDrops, d.SocketDrops)
		}
		if d.Changes != 2 {
			t.Errorf("shaper applied %d changes, want 2 (down, up)", d.Changes)
		}
		changes, err := ScheduledChanges(l.Profile(), start, start, start.Add(3500*time.Millisecond))
		if err != nil || len(changes) != 2 || !changes[0].At.Equal(down) || changes[0].Set != "down" || changes[0].Hold != hold || !changes[1].At.Equal(up) {
			t.Errorf("ScheduledChanges = %+v, %v; want down at +2s (hold %v) and up at +2.3s", changes, err, hold)
		}
		l.Close()
	}
}

// TestTraceEmulator: a saturating UDP flow over down.trace=const:4 (4
// Mbit/s as 1500-byte opportunities) and over a cellular-like trace
// delivers, in every whole second, what the trace's opportunities carry.
//
// Under mm-link's rule the frames leaving a window are its opportunities'
// bytes over 1514, rounded down or up. A frame's receive stamp less the
// delay is when it left plus the shaper's lateness (LateMaxMs, never
// negative) and lateKernel; so the test counts frames against the
// opportunities in [lo-late, hi), and checks from the send times that the
// link stayed saturated.
func TestTraceEmulator(t *testing.T) {
	if testing.Short() {
		t.Skip("floods two links for 4 s each")
	}
	const delay, frame = 5 * time.Millisecond, 1514
	const lateKernel = time.Millisecond
	for _, spec := range []string{"const:4", "cell:4/0.5/7"} {
		tr, err := LoadTrace(spec)
		if err != nil {
			t.Fatal(err)
		}
		l := newTestLink(t, "10:4@4000,down.trace="+spec, BackendEmulator)
		start := l.Instruments().ScheduleStart()
		srv, cli := udpPair(t, l)
		// 1472-byte payloads: 1514-byte frames, one opportunity each
		// (1500 carries all but 14 bytes; the rest takes a second one).
		// Sent at 12 Mbit/s, well above any trace rate here; the limit
		// holds the whole backlog.
		dgs := sendStamped(t, srv, cli, 4000, time.Millisecond, 1472, time.Second)
		sh, ok := l.Instruments().ShaperStats()
		if !ok || len(sh.Directions) == 0 || sh.Directions[0].Direction != "server->client" {
			t.Fatalf("the shaper's report: %+v (%v)", sh, ok)
		}
		late := time.Duration(sh.Directions[0].LateMaxMs*float64(time.Millisecond)) + lateKernel
		carried := func(from, to time.Duration) int { return tr.Opportunities(from, to) * TraceOpportunity / frame }
		counted := 0
		for w := 1; w < 4; w++ {
			lo, hi := time.Duration(w)*time.Second, time.Duration(w+1)*time.Second
			arrived := 0
			saturated := false
			for _, d := range dgs {
				left := d.got.Add(-delay).Sub(start) // plus the lateness
				if !d.got.IsZero() && left >= lo && left < hi {
					arrived++
				}
				if !d.got.IsZero() && d.sentTo.Sub(start) < lo-late && left-late >= hi {
					saturated = true
				}
			}
			most, least := carried(lo-late, hi)+1, carried(lo, hi-late)
			t.Logf("%s second %d: %d datagrams left the link; the trace's opportunities carry %d to %d (shaper late by %v at most, saturated %v)",
				spec, w, arrived, least, most, late-lateKernel, saturated)
			if arrived > most {
				t.Errorf("%s second %d: %d datagrams left the link, more than the %d the trace's opportunities in [%v, %v) carry",
					spec, w, arrived, most, lo-late, hi)
			}
			switch {
			case !saturated:
				t.Logf("%s second %d: no datagram shows the link saturated throughout (the sender fell behind), so fewer than %d is no fault", spec, w, least)
			case arrived < least:
				t.Errorf("%s second %d: %d datagrams left the link saturated, fewer than the %d the trace's opportunities in [%v, %v) carry",
					spec, w, arrived, least, lo, hi-late)
			}
			counted += arrived
		}
		if counted == 0 {
			t.Fatalf("%s: nothing arrived", spec)
		}
		l.Close()
	}
}
