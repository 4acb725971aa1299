package vmtest

import (
	"encoding/binary"
	"sync"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
)

// Issue 14 on Debian's netem: a schedule changes the qdisc in place.

// qdiscCounters reads the root qdisc of the end's device: its handle, the
// packets it has sent, and its backlog in packets and drops.
func qdiscCounters(t *testing.T, l vmLink, e end) (handle uint32, sent uint64, qlen, drops uint32) {
	t.Helper()
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
			handle = a.Handle
			if s := a.Statistics; s != nil {
				if s.Basic != nil {
					sent = uint64(s.Basic.Packets)
				}
				if s.Queue != nil {
					qlen, drops = s.Queue.Qlen, s.Queue.Drops
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return handle, sent, qlen, drops
}

// TestNetemScheduleInPlace: step:2/0.5/1s/4s on a 40 ms / 2 Mbit/s link
// with room for 1000 packets, under a 1 Mbit/s UDP stream for its first
// 3.5 s. At 2 s the rate drops to 0.5 Mbit/s, so a queue builds, and at
// 3 s it comes back. A change applies to the packets arriving after it
// (netem keeps the send times of what it holds), so between the changes
// the link carries 0.5 Mbit/s, and the datagrams sent after the second
// leave 2 Mbit/s apart (5.8 ms) once the queue ahead of them has gone.
// The second change is made with the queue standing, in place: the root
// qdisc keeps its handle, its sent counter and its queue across it; every
// datagram arrives and netem drops none. Each change is recorded with the
// kernel's acknowledgement soon after its time.
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
	var mu sync.Mutex
	arrived := map[int]time.Time{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			if _, err := rx.Read(buf); err != nil {
				return
			}
			mu.Lock()
			arrived[int(binary.BigEndian.Uint32(buf))] = time.Now()
			mu.Unlock()
		}
	}()
	tx, err := dialUDP(l, serverEnd, clientEnd, 7470)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	var sentAt []time.Time
	var before, after [4]uint64
	read := func(into *[4]uint64) {
		h, s, q, d := qdiscCounters(t, l, serverEnd)
		*into = [4]uint64{uint64(h), s, uint64(q), uint64(d)}
	}
	msg := make([]byte, 1400)
	// One 1400-byte datagram every 11.5 ms: 1 Mbit/s of frames.
	for next := time.Now(); time.Since(start) < 3500*time.Millisecond; next = next.Add(11500 * time.Microsecond) {
		time.Sleep(time.Until(next))
		binary.BigEndian.PutUint32(msg, uint32(len(sentAt)))
		sentAt = append(sentAt, time.Now())
		if _, err := tx.Write(msg); err != nil {
			t.Fatal(err)
		}
		since := time.Since(start)
		if before[0] == 0 && since > 2950*time.Millisecond {
			read(&before)
		}
		if after[0] == 0 && since > 3050*time.Millisecond {
			read(&after)
		}
	}
	time.Sleep(time.Until(start.Add(7 * time.Second)))
	rx.Close()
	<-done
	_, _, _, drops := qdiscCounters(t, l, serverEnd)
	t.Logf("sent %d, arrived %d, netem drops %d; before the second change handle %x sent %d qlen %d, after handle %x sent %d qlen %d", len(sentAt), len(arrived), drops, before[0], before[1], before[2], after[0], after[1], after[2])
	switch {
	case before[0] == 0 || after[0] == 0:
		t.Fatal("the stream ended before the counters were read either side of the change")
	case after[0] != before[0]:
		t.Errorf("the root qdisc's handle went from %x to %x: it was replaced, not changed", before[0], after[0])
	case after[1] < before[1]:
		t.Errorf("the root qdisc's sent counter went back from %d to %d: it was replaced, not changed", before[1], after[1])
	case before[2] < 20 || after[2] < before[2]*9/10:
		t.Errorf("the queue went from %d to %d packets across the change; it should have stood (at least 20) and stayed", before[2], after[2])
	}
	if len(arrived) != len(sentAt) || drops != 0 {
		t.Errorf("%d of %d datagrams arrived, netem dropped %d; the changes must lose nothing", len(arrived), len(sentAt), drops)
	}
	// Between the changes: the frames that left the link (arrival less
	// the 20 ms delay) in [2.2 s, 2.9 s).
	n := 0
	for _, a := range arrived {
		if at := a.Add(-20 * time.Millisecond).Sub(start); at >= 2200*time.Millisecond && at < 2900*time.Millisecond {
			n++
		}
	}
	slow := float64(n) * 1442 * 8 / 0.7 / 1e6
	// After: the spacing of the datagrams sent after the second change,
	// which queue behind the backlog and then leave back to back.
	var gaps []time.Duration
	var prev time.Time
	for i, s := range sentAt {
		a, ok := arrived[i]
		if !ok || s.Sub(start) < 3050*time.Millisecond {
			continue
		}
		if !prev.IsZero() {
			gaps = append(gaps, a.Sub(prev))
		}
		prev = a
	}
	if len(gaps) < 10 {
		t.Fatalf("only %d datagrams sent after the second change arrived", len(gaps)+1)
	}
	gap := percentile(gaps, 50)
	t.Logf("between the changes %.3f Mbit/s; datagrams sent after the second change left a median %v apart", slow, gap)
	if slow < 0.375 || slow > 0.625 || gap < 4500*time.Microsecond || gap > 7500*time.Microsecond {
		t.Errorf("carried %.3f Mbit/s between the changes (want 0.5 within 25%%) and spaced the later datagrams %v (want 5.8 ms, 2 Mbit/s)", slow, gap)
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
		if !c.At.Equal(start.Add(want.at)) || c.Value != want.value || c.Set != "rate" || lag < 0 || lag > 100*time.Millisecond {
			t.Errorf("change %d is %+v (acknowledged %v after its time), want rate %g at +%v acknowledged within 100 ms", i, c, lag, want.value, want.at)
		}
	}
}
