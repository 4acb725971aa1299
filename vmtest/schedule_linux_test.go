package vmtest

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
)

// Issue 14 on Debian's netem: a schedule changes the qdisc in place.

// qdiscCounters reads the root qdisc of the end's device: its handle, the
// packets it has sent, and its backlog in packets and drops.
func qdiscCounters(t *testing.T, l vmLink, e end) (handle uint32, sent uint64, qlen, drops uint32) {
	t.Helper()
	c, err := readQdisc(l, e)
	if err != nil {
		t.Fatal(err)
	}
	return uint32(c[0]), c[1], uint32(c[2]), uint32(c[3])
}

// readQdisc is qdiscCounters returning an error: handle, sent, queue
// length and drops.
func readQdisc(l vmLink, e end) ([4]uint64, error) {
	var c [4]uint64
	err := l.Do(e, func() error {
		link, err := netlink.LinkByName(l.Dev(e))
		if err != nil {
			return err
		}
		qs, err := netlink.QdiscList(link)
		if err != nil {
			return err
		}
		for _, q := range qs {
			a := q.Attrs()
			if a.Parent != netlink.HANDLE_ROOT {
				continue
			}
			c[0] = uint64(a.Handle)
			if s := a.Statistics; s != nil {
				if s.Basic != nil {
					c[1] = uint64(s.Basic.Packets)
				}
				if s.Queue != nil {
					c[2], c[3] = uint64(s.Queue.Qlen), uint64(s.Queue.Drops)
				}
			}
		}
		return nil
	})
	return c, err
}

// TestNetemScheduleInPlace: step:2/0.5/1s/4s on a 40 ms / 2 Mbit/s link
// with room for 1000 packets, under a 1 Mbit/s UDP stream for its first
// 3.5 s. At 2 s the rate drops to 0.5 Mbit/s, so a queue builds, and at
// 3 s it comes back. A change applies to the packets arriving after it,
// so between the changes the link carries 0.5 Mbit/s, and the datagrams
// sent after the second leave 2 Mbit/s apart (5.8 ms) behind the queue
// ahead of them. The second change is made in place with the queue
// standing: the root qdisc keeps its handle, sent counter and queue;
// every datagram arrives; each change is acknowledged soon after its time.
//
// Arrivals are timed by the kernel's receive stamp, the spacing is a
// least-squares slope, and the counters either side of the second change
// are read by a goroutine of their own, so a busy host's late timers do
// not move what is measured.
func TestNetemScheduleInPlace(t *testing.T) {
	l := newLink(t, "40:2@1000,down.schedule=step:2/0.5/1s/4s")
	start := l.Instruments().ScheduleStart()
	if start.IsZero() {
		t.Fatal("no schedule start on a link with a schedule")
	}
	rx, err := listenUDP(l, clientEnd, 7470)
	if err != nil {
		t.Fatal(err)
	}
	stampReceives(t, rx)
	arrived := map[int]time.Time{}
	r := readUDP(rx, func(b []byte, at time.Time) {
		if len(b) < 4 {
			return
		}
		if i := int(binary.BigEndian.Uint32(b)); arrived[i].IsZero() {
			arrived[i] = at
		}
	})
	defer r.stop()
	tx, err := dialUDP(l, serverEnd, clientEnd, 7470)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	// The counters: the last reading from 2.5 s on that was taken
	// wholly while only the first change was acknowledged, and the first
	// wholly after the second was.
	acknowledged := func() int {
		c, _ := l.Instruments().AppliedChanges()
		return len(c)
	}
	var before, after [4]uint64
	var readErr error
	polled := make(chan struct{})
	go func() {
		defer close(polled)
		for time.Since(start) < 3500*time.Millisecond || after[0] == 0 && time.Since(start) < 5*time.Second {
			time.Sleep(20 * time.Millisecond)
			n := acknowledged()
			if n == 0 || time.Since(start) < 2500*time.Millisecond {
				continue
			}
			c, err := readQdisc(l, serverEnd)
			if err != nil {
				readErr = err
				return
			}
			if acknowledged() != n {
				continue // changed during the reading
			}
			if n == 1 {
				before = c
			} else {
				after = c
				return
			}
		}
	}()
	var sentAt []time.Time
	msg := make([]byte, 1400)
	// One 1400-byte datagram every 11.5 ms: 1 Mbit/s of frames. After a
	// stall this sender catches up, unlike the other tests' senders: the
	// queue must stand at the second change, and the limit holds it.
	for next := time.Now(); time.Since(start) < 3500*time.Millisecond; next = next.Add(11500 * time.Microsecond) {
		time.Sleep(time.Until(next))
		binary.BigEndian.PutUint32(msg, uint32(len(sentAt)))
		sentAt = append(sentAt, time.Now())
		if _, err := tx.Write(msg); err != nil {
			t.Fatal(err)
		}
	}
	<-polled
	if readErr != nil {
		t.Fatal(readErr)
	}
	time.Sleep(time.Until(start.Add(7 * time.Second)))
	waitDrained(t, l, serverEnd)
	r.stop()
	if r.unstamped > 0 {
		t.Errorf("%d datagrams came without the kernel's receive stamp", r.unstamped)
	}
	_, _, _, drops := qdiscCounters(t, l, serverEnd)
	t.Logf("sent %d, arrived %d, netem drops %d; before the second change handle %x sent %d qlen %d, after handle %x sent %d qlen %d", len(sentAt), len(arrived), drops, before[0], before[1], before[2], after[0], after[1], after[2])
	// The queue must have stood when the second change came: 10 packets
	// (it builds by 43 a second from the first change on; at least 20 by
	// 2.5 s, when the readings start, if the sender kept its pace).
	switch {
	case before[0] == 0 || after[0] == 0:
		t.Fatal("the counters were not read either side of the second change")
	case after[0] != before[0]:
		t.Errorf("the root qdisc's handle went from %x to %x: it was replaced, not changed", before[0], after[0])
	case after[1] < before[1]:
		t.Errorf("the root qdisc's sent counter went back from %d to %d: it was replaced, not changed", before[1], after[1])
	case before[2] < 10 || after[2] < before[2]*9/10:
		t.Errorf("the queue went from %d to %d packets across the change; it should have stood (at least 10) and stayed", before[2], after[2])
	}
	if len(arrived) != len(sentAt) || drops != 0 {
		t.Errorf("%d of %d datagrams arrived, netem dropped %d; the changes must lose nothing", len(arrived), len(sentAt), drops)
	}
	changes, err := l.Instruments().AppliedChanges()
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) < 2 {
		t.Fatalf("%d changes recorded, want the two of the first period: %+v", len(changes), changes)
	}
	for i, want := range []struct {
		at    time.Duration
		value float64
	}{{2 * time.Second, 0.5}, {3 * time.Second, 2}} {
		c := changes[i]
		lag := c.AppliedAt.Sub(c.At)
		t.Logf("change %d: %s %g at +%v, acknowledged %v later", i, c.Set, c.Value, c.At.Sub(start), lag)
		// Half a second: late enough for a busy host's stalls, still
		// well before the next change is due.
		if !c.At.Equal(start.Add(want.at)) || c.Value != want.value || c.Set != "rate" || lag < 0 || lag > 500*time.Millisecond {
			t.Errorf("change %d is %+v (acknowledged %v after its time), want rate %g at +%v acknowledged within 500 ms", i, c, lag, want.value, want.at)
		}
	}
	slowFrom, slowTo := changes[0].AppliedAt.Add(200*time.Millisecond), changes[1].AppliedAt.Add(-50*time.Millisecond)
	if slowTo.Sub(slowFrom) < 300*time.Millisecond {
		t.Fatalf("the changes were acknowledged %v apart; too little between them to measure the rate", changes[1].AppliedAt.Sub(changes[0].AppliedAt))
	}
	// Between the changes: the frames that left the link (arrival less
	// the 20 ms delay) from 200 ms after the first was acknowledged (the
	// queue has built) to just before the second was.
	n := 0
	for _, a := range arrived {
		if at := a.Add(-20 * time.Millisecond); !at.Before(slowFrom) && at.Before(slowTo) {
			n++
		}
	}
	slow := float64(n) * 1442 * 8 / slowTo.Sub(slowFrom).Seconds() / 1e6
	// After: the spacing of the datagrams sent after the second change
	// was acknowledged, which queue behind the backlog and then leave
	// back to back.
	var later []time.Time
	for i, s := range sentAt {
		if a, ok := arrived[i]; ok && s.After(changes[1].AppliedAt) {
			later = append(later, a)
		}
	}
	if len(later) < 20 {
		t.Fatalf("only %d datagrams sent after the second change arrived", len(later))
	}
	gap := slope(later)
	t.Logf("between the changes %.3f Mbit/s; datagrams sent after the second change left %v apart (least squares)", slow, gap)
	if slow < 0.375 || slow > 0.625 || gap < 4500*time.Microsecond || gap > 7500*time.Microsecond {
		t.Errorf("carried %.3f Mbit/s between the changes (want 0.5 within 25%%) and spaced the later datagrams %v (want 5.8 ms, 2 Mbit/s)", slow, gap)
	}
}
