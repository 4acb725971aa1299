package shapedlink

import (
	"encoding/binary"
	"net"
	"testing"
	"time"
)

// sendStamped sends n numbered datagrams of size bytes from srv to cli,
// gap apart, and returns each one's send time and arrival time (zero if
// it never came), waiting tail after the last for stragglers.
func sendStamped(t *testing.T, srv, cli *net.UDPConn, n int, gap time.Duration, size int, tail time.Duration) (sent, got []time.Time) {
	t.Helper()
	sent, got = make([]time.Time, n), make([]time.Time, n)
	_ = cli.SetReadBuffer(8 << 20)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			k, _, err := cli.ReadFromUDP(buf)
			if err != nil {
				return
			}
			if i := int(binary.BigEndian.Uint32(buf)); k >= 4 && i < n && got[i].IsZero() {
				got[i] = time.Now()
			}
		}
	}()
	msg := make([]byte, size)
	start := time.Now()
	to := cli.LocalAddr().(*net.UDPAddr)
	for i := range n {
		time.Sleep(time.Until(start.Add(time.Duration(i) * gap)))
		binary.BigEndian.PutUint32(msg, uint32(i))
		sent[i] = time.Now()
		if _, err := srv.WriteToUDP(msg, to); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(tail)
	cli.Close()
	<-done
	return sent, got
}

// TestScheduleBlackoutEmulator: blackout:300ms/2s takes the link down 1 s
// after its schedule starts, for 300 ms. Of datagrams sent every 2 ms,
// every one sent more than 1 ms inside the blackout is lost and every one
// sent more than 1 ms outside it arrives; the shaper counts the lost ones
// as blackout drops and drops nothing else, so the change itself costs
// no packet. With hold, nothing is lost and what was sent while down
// arrives after the link is back up.
func TestScheduleBlackoutEmulator(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two links for 2.5 s each")
	}
	for _, hold := range []bool{false, true} {
		spec := "blackout:300ms/2s"
		if hold {
			spec += "/hold"
		}
		// A limit that holds everything sent during the blackout.
		l := newTestLink(t, "20:10@1000,down.schedule="+spec, BackendEmulator)
		start := l.ScheduleStart()
		if start.IsZero() {
			t.Fatal("ScheduleStart is zero on a link with a schedule")
		}
		down, up := start.Add(time.Second), start.Add(1300*time.Millisecond)
		srv, cli := udpPair(t, l)
		sent, got := sendStamped(t, srv, cli, 1200, 2*time.Millisecond, 64, 500*time.Millisecond)
		if last := sent[len(sent)-1].Sub(start); last > 2900*time.Millisecond {
			t.Fatalf("the last datagram left %v after the schedule's start; the second blackout, at 3 s, would be in the run", last)
		}
		lost, inside := 0, 0
		for i, s := range sent {
			in := !s.Before(down.Add(time.Millisecond)) && s.Before(up.Add(-time.Millisecond))
			out := s.Before(down.Add(-time.Millisecond)) || !s.Before(up.Add(time.Millisecond))
			if got[i].IsZero() {
				lost++
			}
			if in {
				inside++
			}
			switch {
			case hold && got[i].IsZero():
				t.Errorf("hold: datagram %d (sent %v after the start) was lost", i, s.Sub(start))
			case hold && in && got[i].Before(up.Add(10*time.Millisecond)):
				t.Errorf("hold: datagram %d sent %v into the blackout arrived %v before the link was back up plus the delay", i, s.Sub(down), up.Add(10*time.Millisecond).Sub(got[i]))
			case !hold && in && !got[i].IsZero():
				t.Errorf("drop: datagram %d sent %v into the blackout arrived", i, s.Sub(down))
			case !hold && out && got[i].IsZero():
				t.Errorf("drop: datagram %d sent %v after the start, outside the blackout, was lost", i, s.Sub(start))
			}
		}
		sh, _ := l.ShaperStats()
		d := sh.Directions[0]
		t.Logf("hold %v: %d of %d lost (%d sent well inside); shaper: %d blackout drops, %d changes, max lag %.3f ms", hold, lost, len(sent), inside, d.BlackoutDrops, d.Changes, d.MaxChangeLagMs)
		if inside < 140 {
			t.Errorf("only %d datagrams sent inside the blackout; the test needs about 150", inside)
		}
		if want := uint64(lost); d.BlackoutDrops != want || d.LossDrops+d.LimitDrops+d.SocketDrops != 0 {
			t.Errorf("shaper: %d blackout drops (want %d, the datagrams lost), %d loss, %d limit, %d socket drops (want none)", d.BlackoutDrops, want, d.LossDrops, d.LimitDrops, d.SocketDrops)
		}
		if d.Changes != 2 {
			t.Errorf("shaper applied %d changes, want 2 (down, up)", d.Changes)
		}
		changes, err := ScheduledChanges(l.Profile(), start, start, start.Add(2500*time.Millisecond))
		if err != nil || len(changes) != 2 || !changes[0].At.Equal(down) || changes[0].Set != "down" || changes[0].Hold != hold || !changes[1].At.Equal(up) {
			t.Errorf("ScheduledChanges = %+v, %v; want down at +1s (hold %v) and up at +1.3s", changes, err, hold)
		}
		l.Close()
	}
}

// TestTraceEmulator: a saturating UDP flow over down.trace=const:4 (4
// Mbit/s as 1500-byte opportunities) and over a cellular-like trace
// delivers, in every whole second, what the trace's opportunities carry,
// within two datagrams (one for the window's edges, one for the receive
// time's noise).
func TestTraceEmulator(t *testing.T) {
	if testing.Short() {
		t.Skip("floods two links for 4 s each")
	}
	for _, spec := range []string{"const:4", "cell:4/0.5/7"} {
		tr, err := LoadTrace(spec)
		if err != nil {
			t.Fatal(err)
		}
		l := newTestLink(t, "10:4@4000,down.trace="+spec, BackendEmulator)
		start := l.ScheduleStart()
		srv, cli := udpPair(t, l)
		// 1472-byte payloads: 1514-byte frames, one opportunity each
		// (1500 carries all but 14 bytes; the rest takes a second one).
		// Sent at 12 Mbit/s, well above any trace rate here; the limit
		// holds the whole backlog.
		_, got := sendStamped(t, srv, cli, 4000, time.Millisecond, 1472, time.Second)
		frames := 0
		for w := 1; w < 4; w++ {
			lo, hi := start.Add(time.Duration(w)*time.Second), start.Add(time.Duration(w+1)*time.Second)
			arrived := 0
			for _, g := range got {
				// Arrival minus the 5 ms delay is when the frame left
				// the link.
				if at := g.Add(-5 * time.Millisecond); !g.IsZero() && !at.Before(lo) && at.Before(hi) {
					arrived++
				}
			}
			opps := tr.Opportunities(time.Duration(w)*time.Second, time.Duration(w+1)*time.Second)
			want := opps * TraceOpportunity / 1514 // whole frames the bytes carry
			t.Logf("%s second %d: %d datagrams arrived, the trace carries %d frames (%d opportunities)", spec, w, arrived, want, opps)
			if arrived < want-2 || arrived > want+2 {
				t.Errorf("%s second %d: %d datagrams left the link, the trace's opportunities carry %d", spec, w, arrived, want)
			}
			frames += arrived
		}
		if frames == 0 {
			t.Fatalf("%s: nothing arrived", spec)
		}
		l.Close()
	}
}
