package shapedlink

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// bulkDown sends bulk TCP from the server end to the client end for d and
// returns the bytes delivered.
func bulkDown(t *testing.T, l *Link, d time.Duration) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var got int64
	r := tcpCross{cc: "reno"}
	ap, err := r.Receive(ctx, l.Client(), netip.AddrPortFrom(l.ClientAddr(), 0), func(n int) { got += int64(n) })
	if err != nil {
		t.Fatal(err)
	}
	s, err := r.Send(ctx, l.Server(), ap)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Wait(); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestCrossFlowSharesTheBottleneck runs a cubic cross flow alone, beside a
// bulk flow in the same direction, and alone again: its goodput must fall
// while the other flow runs and recover after, each phase compared with
// the first, measured in this test.
func TestCrossFlowSharesTheBottleneck(t *testing.T) {
	if testing.Short() {
		t.Skip("10 s of traffic")
	}
	l := newTestLink(t, "20:10,down.cross=1xcubic", BackendEmulator)
	phase := func(d time.Duration, during func()) (from, to time.Time) {
		start := time.Now()
		if during != nil {
			during()
		} else {
			time.Sleep(d)
		}
		// The first second of each phase is the flows converging.
		return start.Add(time.Second), time.Now()
	}
	aFrom, aTo := phase(3*time.Second, nil)
	var bulk int64
	bFrom, bTo := phase(0, func() { bulk = bulkDown(t, l, 4*time.Second) })
	cFrom, cTo := phase(3*time.Second, nil)
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
	rs := l.Instruments().CrossFlows()
	if len(rs) != 1 {
		t.Fatalf("CrossFlows: %d reports, want 1: %+v", len(rs), rs)
	}
	r := rs[0]
	alone, beside, after := r.GoodputMbit(aFrom, aTo), r.GoodputMbit(bFrom, bTo), r.GoodputMbit(cFrom, cTo)
	t.Logf("cross cubic: alone %.2f, beside a reno flow (%.2f Mbit/s) %.2f, after %.2f Mbit/s; cc %q, %d of %d packets retransmitted",
		alone, float64(bulk)*8/4e6, beside, after, r.CC, r.Retransmits, r.SentPackets)
	if r.Dir != "down" || r.Kind != "cubic" || r.CC != "cubic" {
		t.Errorf("report names dir %q kind %q cc %q, want down, cubic, cubic", r.Dir, r.Kind, r.CC)
	}
	if alone < 5 {
		t.Fatalf("alone the cross flow carried %.2f Mbit/s of a 10 Mbit/s link; it did not run", alone)
	}
	if beside > 0.8*alone {
		t.Errorf("beside a bulk flow the cross flow kept %.2f of its %.2f Mbit/s; it does not share the bottleneck", beside, alone)
	}
	if after < 0.8*alone {
		t.Errorf("after the bulk flow the cross flow carried %.2f of its %.2f Mbit/s; it did not recover", after, alone)
	}
	if r.SentPackets == 0 || r.Bytes == 0 {
		t.Errorf("sender counted %d packets, receiver %d bytes", r.SentPackets, r.Bytes)
	}
}

// TestCrossFlowsAsAsked checks that every flow the profile asks for runs,
// in each direction, and that a link without the option has none.
func TestCrossFlowsAsAsked(t *testing.T) {
	l := newTestLink(t, "10:20,down.cross=2xreno,up.cross=1xcubic", BackendEmulator)
	time.Sleep(1500 * time.Millisecond)
	rs := l.Instruments().CrossFlows()
	var got []string
	for _, r := range rs {
		got = append(got, r.Dir+":"+r.Kind+":"+r.CC)
		if r.Bytes == 0 || r.Err != "" {
			t.Errorf("flow %d (%s %s): %d bytes delivered, err %q", r.Index, r.Dir, r.Kind, r.Bytes, r.Err)
		}
	}
	if want := "down:reno:reno down:reno:reno up:cubic:cubic"; strings.Join(got, " ") != want {
		t.Errorf("flows %q, want %q", strings.Join(got, " "), want)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if plain := newTestLink(t, "10:20", BackendNone); plain.Instruments().CrossFlows() != nil {
		t.Error("a link without cross traffic reports cross flows")
	}
}

// TestCrossFlowFailureIsTheLinks checks that a cross flow that stops
// before the link closes makes Err report it.
func TestCrossFlowFailureIsTheLinks(t *testing.T) {
	l := newTestLink(t, "10:20,down.cross=1xreno", BackendNone)
	time.Sleep(300 * time.Millisecond)
	if err := l.Err(); err != nil {
		t.Fatalf("Err with the flow running: %v", err)
	}
	// Shut the sender's socket for writing, as a failure under it would:
	// its next write fails with EPIPE.
	rc, err := l.cross.flows[0].sender.(*tcpSender).c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	rc.Control(func(fd uintptr) { unix.Shutdown(int(fd), unix.SHUT_WR) })
	deadline := time.Now().Add(3 * time.Second)
	for l.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if err := l.Err(); err == nil || !strings.Contains(err.Error(), "cross flow 0 (reno, down) stopped") {
		t.Errorf("Err after the flow failed: %v", err)
	}
}
