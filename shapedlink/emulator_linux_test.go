package shapedlink

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestAutoBackendLossyLink builds a lossy link with every option left to
// New, as an experiment would, and checks the backend choice is logged and
// the loss lands inside its binomial interval with no limit drops.
func TestAutoBackendLossyLink(t *testing.T) {
	needNamespaces(t)
	var logs lockedBuffer
	p, _ := ParseProfile("2:100:5@1000") // room for the bursts in the delay line
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	l, err := New(ctx, p, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	t.Log(logs.String())
	if !strings.Contains(logs.String(), "backend chosen") || !strings.Contains(logs.String(), "backend="+string(l.Backend())) {
		t.Errorf("the automatic backend choice was not logged:\n%s", logs.String())
	}
	want := BackendEmulator
	if l.netemAvailable {
		want = BackendNetem
	}
	if l.Backend() != want {
		t.Errorf("auto chose %q with netem available=%v", l.Backend(), l.netemAvailable)
	}
	if l.Backend() != BackendEmulator {
		t.Skip("the rest checks the emulator's counters")
	}
	srv, cli := udpPair(t, l)
	bigReadBuffer(t, cli)
	const n = 10000
	// The receiver stops once it has every datagram the shaper did not
	// drop, however slowly the machine runs (see receiveCount).
	expect := make(chan int, 1)
	received := make(chan int)
	go func() { received <- receiveCount(cli, expect) }()
	for i := 0; i < n; i += 20 { // 20 small packets a millisecond: far below 100 Mbit/s
		sendUDP(t, srv, cli, 20, 32)
		time.Sleep(time.Millisecond)
	}
	// Wait until the shaper has judged every datagram (a minute only
	// bounds the wait), so its drop count is final.
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if st := l.shaper.(*emuShaper).mon.Snapshot()[0]; st.Received >= n && st.Packets == 0 {
			break
		}
	}
	s, err := l.Instruments().Sampler(ServerEnd)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := s.Poll()
	expect <- n - int(min(q.LossDrops, n))
	got := <-received
	mean, sd := n*0.05, math.Sqrt(n*0.05*0.95)
	lo, hi := mean-3.29*sd, mean+3.29*sd
	t.Logf("loss drops %d of %d (99.9%% interval [%.0f, %.0f]), limit drops %d, received %d", q.LossDrops, n, lo, hi, q.LimitDrops, got)
	if float64(q.LossDrops) < lo || float64(q.LossDrops) > hi {
		t.Errorf("loss drops %d outside [%.0f, %.0f]", q.LossDrops, lo, hi)
	}
	if q.LimitDrops != 0 {
		t.Errorf("%d limit drops at a tenth of the rate", q.LimitDrops)
	}
	if uint64(got) != n-q.LossDrops {
		t.Errorf("received %d, want %d - %d", got, n, q.LossDrops)
	}
	rep, ok := l.Instruments().ShaperStats()
	if !ok {
		t.Fatal("ShaperStats reports no emulator on an emulated link")
	}
	t.Logf("shaper: %+v", rep)
	if rep.Priority == "" {
		t.Error("ShaperStats has no priority")
	}
	if len(rep.Directions) != 2 || rep.Directions[0].Direction != "server->client" {
		t.Fatalf("ShaperStats directions: %+v", rep.Directions)
	}
	d := rep.Directions[0]
	if d.LossDrops != q.LossDrops || d.Forwarded != uint64(got) || d.Received < n {
		t.Errorf("server->client: loss %d forwarded %d received %d; the sampler saw loss %d and the client got %d of %d",
			d.LossDrops, d.Forwarded, d.Received, q.LossDrops, got, n)
	}
	if d.LateMaxMs < d.LateP99Ms || d.LateP99Ms < d.LateP50Ms {
		t.Errorf("lateness not ordered: p50 %v p99 %v max %v", d.LateP50Ms, d.LateP99Ms, d.LateMaxMs)
	}
}

// TestEmulatorDelay checks the round trip through the emulator is close to
// the profile's, and never below it.
func TestEmulatorDelay(t *testing.T) {
	l := newTestLink(t, "40:10", BackendEmulator)
	srv, cli := udpPair(t, l)
	var rtts []time.Duration
	for i := 0; i < 15; i++ {
		rtt, err := echoRoundTrip(t, srv, cli, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		rtts = append(rtts, rtt)
	}
	slices.Sort(rtts)
	p50 := rtts[len(rtts)/2]
	t.Logf("round trips over a 40 ms profile: min %v p50 %v max %v", rtts[0], p50, rtts[len(rtts)-1])
	if rtts[0] < 40*time.Millisecond {
		t.Errorf("a round trip of %v is shorter than the configured 40 ms", rtts[0])
	}
	// Loose bounds: the machine is shared and other processes' load shows
	// up as delay; accuracy is measured by examples/calibrate, not here.
	if rtts[0] > 45*time.Millisecond || p50 > 60*time.Millisecond {
		t.Errorf("round trips min %v, median %v; want the minimum within 5 ms and the median within 20 ms of 40 ms", rtts[0], p50)
	}
}

// TestEmulatorKilled kills the shaper under a live link: Err and the
// sampler must say so rather than report an idle queue.
func TestEmulatorKilled(t *testing.T) {
	needNamespaces(t)
	p, _ := ParseProfile("10:10")
	l, err := New(context.Background(), p, Options{Backend: BackendEmulator, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		// Close reports the shaper's death too, and still cleans up.
		if err := l.Close(); err == nil || !strings.Contains(err.Error(), "exited") {
			t.Errorf("Close after the shaper was killed = %v, want an error saying it had exited", err)
		}
	}()
	if err := l.Err(); err != nil {
		t.Fatalf("Err() on a fresh link: %v", err)
	}
	s, err := l.Instruments().Sampler(ClientEnd)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Poll(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(l.Instruments().EmulatorPID(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for l.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := l.Err(); err == nil || !strings.Contains(err.Error(), "exited") {
		t.Errorf("Err() after the shaper was killed = %v", err)
	}
	if _, err := s.Poll(); err == nil {
		t.Error("the sampler polled a dead emulator without an error")
	}
}

// checkShaperBuffers checks that the shaper's socket buffers are reported
// as the kernel applied them: 8 MiB forced as root in the host's user
// namespace, and capped at net.core.rmem_max and wmem_max otherwise (the
// kernel reports twice the size set).
func checkShaperBuffers(t *testing.T, l *Link) {
	t.Helper()
	rep, ok := l.Instruments().ShaperStats()
	if !ok {
		t.Fatal("ShaperStats reports no emulator on an emulated link")
	}
	want := func(sysctl string) uint64 {
		const asked = 8 << 20
		if l.Mode() == ModeRoot {
			return 2 * asked
		}
		v, err := readSysctl(sysctl)
		if err != nil {
			t.Fatalf("reading %s: %v", sysctl, err)
		}
		limit, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("parsing %s %q: %v", sysctl, v, err)
		}
		return 2 * min(asked, limit)
	}
	wantRcv, wantSnd := want("net/core/rmem_max"), want("net/core/wmem_max")
	for _, d := range rep.Directions {
		if d.RcvBufBytes != wantRcv || d.SndBufBytes != wantSnd {
			t.Errorf("%s in %s mode: shaper buffers rcvbuf %d sndbuf %d, want %d and %d",
				d.Direction, l.Mode(), d.RcvBufBytes, d.SndBufBytes, wantRcv, wantSnd)
		}
	}
	for _, a := range l.Applied() {
		if !strings.Contains(a, fmt.Sprintf("shaper rcvbuf %d sndbuf %d", wantRcv, wantSnd)) {
			t.Errorf("applied %q does not give the shaper's buffers (rcvbuf %d sndbuf %d)", a, wantRcv, wantSnd)
		}
	}
}
