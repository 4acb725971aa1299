package shapedlink

import (
	"context"
	"math/rand/v2"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// TestEmulatorDepartureWindow: the same TCP transfer over two 2:1000 links
// keeping offloads, one batching departures within 500 us: with the window
// some segments leave early, never by more than the window, and the
// shaper writes more segments per frame than without, unless the control
// already wrote whole super-packets; without it none leaves early. Then
// sparse datagrams over the window's link, each alone on it, leave on
// time (none early).
func TestEmulatorDepartureWindow(t *testing.T) {
	needNamespaces(t)
	const window = 500 * time.Microsecond
	p, err := ParseProfile("2:1000")
	if err != nil {
		t.Fatal(err)
	}
	build := func(w time.Duration) *Link {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		l, err := New(ctx, p, Options{Backend: BackendEmulator, Seed: 42, Offload: OffloadKeep, EmulatorDepartureWindow: w, Logger: testLogger(t)})
		if err != nil {
			t.Fatalf("building the link with departure window %v: %v", w, err)
		}
		t.Cleanup(func() {
			if err := l.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		return l
	}
	payload := make([]byte, 24<<20)
	rand.NewChaCha8([32]byte{2}).Read(payload)
	segsPerWrite := map[time.Duration]float64{}
	var ws *Link
	for _, w := range []time.Duration{0, window} {
		l := build(w)
		applied := strings.Join(l.Applied(), "\n")
		if said := strings.Contains(applied, "departure window "+window.String()); said != (w > 0) {
			t.Errorf("window %v: the applied lines say %q", w, applied)
		}
		if sent, got := tcpTransfer(t, l, payload); sent != got {
			t.Fatalf("window %v: the stream arrived changed", w)
		}
		st := waitShaperIdle(t, l, 0)
		stats, _ := l.Instruments().ShaperStats()
		segsPerWrite[w] = float64(st.Forwarded) / float64(max(st.FramesOut, 1))
		t.Logf("window %v: %d segments (%d super-packets in) in %d writes, %.2f a write; %d early, at most %v",
			w, st.Forwarded, st.SuperPacketsIn, st.FramesOut, segsPerWrite[w], st.Early, time.Duration(st.MaxEarlyNanos))
		switch {
		case st.FramesOut == 0 || st.FramesOut > st.Forwarded:
			t.Errorf("window %v: %d frames written for %d segments", w, st.FramesOut, st.Forwarded)
		case w == 0 && (st.Early != 0 || st.MaxEarlyNanos != 0):
			t.Errorf("no window, yet %d segments left early (at most %v)", st.Early, time.Duration(st.MaxEarlyNanos))
		case w > 0 && st.Early == 0:
			t.Errorf("window %v: no segment left early over %d segments of a saturating flow", w, st.Forwarded)
		case time.Duration(st.MaxEarlyNanos) > w:
			t.Errorf("window %v: a segment left %v early, more than the window", w, time.Duration(st.MaxEarlyNanos))
		case w > 0 && stats.Directions[0].EarlyMaxMs != float64(st.MaxEarlyNanos)/1e6:
			t.Errorf("ShaperStats EarlyMaxMs %v, counters %d ns", stats.Directions[0].EarlyMaxMs, st.MaxEarlyNanos)
		}
		if w > 0 {
			ws = l
			// The control's segments per write, against the most a write
			// can carry (a whole super-packet as it arrived).
			whole := float64(st.Received) / float64(max(st.SuperPacketsIn, 1))
			if c := segsPerWrite[0]; c < 0.8*whole && segsPerWrite[w] <= c {
				t.Errorf("window %v: %.2f segments a write, no more than the %.2f without it (%.2f a super-packet in)", w, segsPerWrite[w], c, whole)
			}
		}
	}
	before := waitShaperIdle(t, ws, 0)
	sparseDatagrams(t, ws, 40, 5*time.Millisecond)
	after := waitShaperIdle(t, ws, 0)
	if after.Forwarded-before.Forwarded < 40 {
		t.Fatalf("%d of the 40 datagrams crossed", after.Forwarded-before.Forwarded)
	}
	if after.Early != before.Early {
		t.Errorf("%d of 40 datagrams sent 5 ms apart left early: a frame alone on the link must keep its time", after.Early-before.Early)
	}
}

// sparseDatagrams sends n UDP datagrams from l's server end to its client
// end, gap apart.
func sparseDatagrams(t *testing.T, l *Link, n int, gap time.Duration) {
	t.Helper()
	var pc net.PacketConn
	if err := l.Client().Do(func() (err error) {
		pc, err = net.ListenPacket("udp4", netip.AddrPortFrom(l.ClientAddr(), 0).String())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	var c net.Conn
	if err := l.Server().Do(func() (err error) {
		c, err = net.Dial("udp4", pc.LocalAddr().String())
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range n {
		if _, err := c.Write(make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(gap)
	}
}
