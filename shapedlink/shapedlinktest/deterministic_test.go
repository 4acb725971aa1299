package shapedlinktest_test

import (
	"context"
	cryptorand "crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"hash"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/cryptotest"
	"testing/synctest"
	"time"

	"github.com/quic-go/quic-go"

	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
	"github.com/shakenfist/quicbench/transport"
)

var (
	deterministicRuns = flag.Int("deterministic.runs", 0,
		"repeat TestDeterministicLongRun's 60 s exchange this many times, and fail if any run differs from the first (0: 3 runs, of which one may differ)")
	deterministicGC = flag.Bool("deterministic.gc", false,
		"run TestDeterministicLongRun without Deterministic's stopping of the collector (one P and seeded crypto only)")
)

// exchangeProfile is the link of TestDeterministicLongRun: 60 ms, 5
// Mbit/s, 2% loss each way, and 4 ms of normal jitter, which reorders.
const exchangeProfile = "60:5:2,jitter=4/normal"

// exchangeRun is one run of the 60 s exchange: a hash of each
// direction's packet events, the events themselves, and what the client
// saw.
type exchangeRun struct {
	hash     string
	lines    []string
	rtts     []time.Duration
	bulk     int64
	took     time.Duration
	wallTime time.Duration
	alloc    uint64 // bytes allocated during the run
}

// same reports whether two runs saw the same packets and the same round
// trips.
func (a exchangeRun) same(b exchangeRun) bool {
	return a.hash == b.hash && slices.Equal(a.rtts, b.rtts) && a.bulk == b.bulk
}

// TestDeterministicLongRun: a quic-go request/response exchange beside a
// bulk transfer, for 60 s of virtual time over a lossy, jittery
// in-process link, under Deterministic, gives the same packet events
// (every one, both directions, hashed) and the same round trips every
// run.
//
// By default it runs 3 times and passes when at most one run is odd:
// the scheduler preempts a goroutine that has run 10 ms of wall time,
// which Deterministic cannot stop, and on a busy machine that changed
// about one run in thirty here; what this catches is runs that differ
// as a rule (an unseeded draw, several Ps). -deterministic.runs N is the
// proof: N runs, every one the same as the first (docs/virtual-time.md
// gives the command and its result).
func TestDeterministicLongRun(t *testing.T) {
	runs, strict := *deterministicRuns, true
	if runs == 0 {
		runs, strict = 3, false
	}
	var all []exchangeRun // the first run's packet events, and the others' hashes
	var differ []int
	var wall time.Duration
	for i := range runs {
		r := runExchange(t, 7, !*deterministicGC)
		wall += r.wallTime
		if i == 0 {
			n := len(r.rtts)
			sorted := slices.Sorted(slices.Values(r.rtts))
			t.Logf("run 1: %d packet events, %d exchanges (p50 %v, p95 %v), %d bulk bytes, in %v of virtual time and %v of wall time, %d MiB allocated",
				len(r.lines), n, sorted[n/2], sorted[n*95/100], r.bulk, r.took, r.wallTime, r.alloc>>20)
			if n < 100 || r.bulk == 0 || r.took < 60*time.Second {
				t.Fatalf("the exchange did too little to test anything: %d exchanges, %d bulk bytes in %v", n, r.bulk, r.took)
			}
			if !slices.ContainsFunc(r.lines, func(l string) bool { return strings.Contains(l, " lost") }) {
				t.Fatal("nothing was lost on a 2% loss link: the test does not test what it is for")
			}
		} else if !r.same(all[0]) {
			differ = append(differ, i+1)
			t.Logf("run %d differs from run 1: %s", i+1, firstDifference(all[0], r))
		}
		if i > 0 {
			r.lines = nil
		}
		all = append(all, r)
	}
	t.Logf("%d runs, %d differing from the first %v, %v of wall time (%v a run)", runs, len(differ), differ, wall, wall/time.Duration(runs))
	if strict && len(differ) > 0 {
		t.Errorf("%d of %d runs differ from the first", len(differ), runs)
	}
	if !strict {
		most := 0
		for _, a := range all {
			most = max(most, len(slices.DeleteFunc(slices.Clone(all), func(b exchangeRun) bool { return !a.same(b) })))
		}
		if most < runs-1 {
			t.Errorf("only %d of %d runs are the same: more than the one odd run a busy machine may cause", most, runs)
		}
	}
}

// firstDifference says where run b first parts from run a.
func firstDifference(a, b exchangeRun) string {
	for i := range min(len(a.lines), len(b.lines)) {
		if a.lines[i] != b.lines[i] {
			return fmt.Sprintf("packet event %d of %d:\n\t%s\n\t%s", i+1, len(a.lines), a.lines[i], b.lines[i])
		}
	}
	if len(a.lines) != len(b.lines) {
		return fmt.Sprintf("%d and %d packet events", len(a.lines), len(b.lines))
	}
	return fmt.Sprintf("the same packets, but %d and %d exchanges, %d and %d bulk bytes", len(a.rtts), len(b.rtts), a.bulk, b.bulk)
}

// runExchange runs the exchange once in a synctest bubble, under
// Deterministic, or with gc only its one P and seeded crypto.
func runExchange(t *testing.T, seed uint64, deterministic bool) exchangeRun {
	var out exchangeRun
	start := time.Now()
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	alloc := mem.TotalAlloc
	t.Run("run", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			if deterministic {
				shapedlinktest.Deterministic(t, 1)
			} else {
				cryptotest.SetGlobalRandom(t, 1)
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			}
			var mu sync.Mutex
			var h [2]hash.Hash
			h[0], h[1] = sha256.New(), sha256.New()
			link := shapedlinktest.Sim(t, exchangeProfile, shapedlink.Options{Seed: seed, PacketTrace: func(e shapedlink.PacketEvent) {
				l := e.String()
				mu.Lock()
				h[e.Dir].Write([]byte(l + "\n"))
				out.lines = append(out.lines, l)
				mu.Unlock()
			}})
			vstart := time.Now()
			out.rtts, out.bulk = exchange(t, link, 60*time.Second)
			out.took = time.Since(vstart)
			mu.Lock()
			out.hash = hex.EncodeToString(h[0].Sum(nil)) + hex.EncodeToString(h[1].Sum(nil))
			mu.Unlock()
		})
	})
	out.wallTime = time.Since(start)
	runtime.ReadMemStats(&mem)
	out.alloc = mem.TotalAlloc - alloc
	return out
}

// exchange runs, for d, a quic-go client that sends a 64-byte request on
// one stream every 20 ms after the last response and reads a 1,200-byte
// response, while the server sends on another stream as fast as it may.
// It returns the round trips and the bulk bytes the client read.
func exchange(t *testing.T, link *shapedlink.Link, d time.Duration) ([]time.Duration, int64) {
	ctx := context.Background()
	cert, err := transport.NewCertificate(link.ServerAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	serverTLS, clientTLS, err := cert.TLSConfigs("exchange")
	if err != nil {
		t.Fatal(err)
	}
	conf := &quic.Config{InitialPacketSize: simPacketSize, DisablePathMTUDiscovery: true, MaxIdleTimeout: 10 * time.Second}
	spc, err := link.Server().ListenPacket(ctx, "udp", ":4433")
	if err != nil {
		t.Fatal(err)
	}
	cpc, err := link.Client().ListenPacket(ctx, "udp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	str, ctr := &quic.Transport{Conn: spc}, &quic.Transport{Conn: cpc}
	defer ctr.Close()
	defer str.Close()
	ln, err := str.Listen(serverTLS, conf)
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- serveExchange(ctx, ln) }()

	conn, err := ctr.Dial(ctx, spc.LocalAddr(), clientTLS, conf)
	if err != nil {
		t.Fatal(err)
	}
	bulk, err := conn.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bulk.Write([]byte{'b'}); err != nil {
		t.Fatal(err)
	}
	var got int64
	read := make(chan struct{})
	go func() {
		defer close(read)
		got, _ = io.Copy(io.Discard, bulk)
	}()
	rr, err := conn.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var rtts []time.Duration
	req, resp := make([]byte, 64), make([]byte, 1200)
	req[0] = 'r'
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		sent := time.Now()
		if _, err := rr.Write(req); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(rr, resp); err != nil {
			t.Fatal(err)
		}
		rtts = append(rtts, time.Since(sent))
	}
	_ = conn.CloseWithError(0, "done")
	<-read
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	return rtts, got
}

// serveExchange accepts one connection and serves its streams: one whose
// first byte is 'b' gets bytes as fast as it takes them; one whose first
// byte is 'r' gets 1,200 bytes back for every 64 it sends. It returns
// when the client has closed the connection.
func serveExchange(ctx context.Context, ln *quic.Listener) error {
	conn, err := ln.Accept(ctx)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	for {
		st, err := conn.AcceptStream(ctx)
		if err != nil {
			break
		}
		wg.Go(func() {
			buf := make([]byte, 1200)
			if _, err := io.ReadFull(st, buf[:1]); err != nil {
				return
			}
			if buf[0] == 'b' {
				_, _ = io.Copy(st, zeroReader{})
				return
			}
			if _, err := io.ReadFull(st, buf[1:64]); err != nil {
				return
			}
			for {
				if _, err := st.Write(buf); err != nil {
					return
				}
				if _, err := io.ReadFull(st, buf[:64]); err != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	var ae *quic.ApplicationError
	if err := context.Cause(conn.Context()); !errors.As(err, &ae) {
		return fmt.Errorf("the connection ended with %v, not the client's close", err)
	}
	return nil
}

// TestDeterministicSettings: under Deterministic the process has one P,
// no collector and a memory limit, and crypto/rand gives the same draws
// for the same seed; when the test ends each is as it was.
func TestDeterministicSettings(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	percent := debug.SetGCPercent(100)
	defer debug.SetGCPercent(percent)
	limit := debug.SetMemoryLimit(-1)
	var draws [3][16]byte
	for i, seed := range []uint64{5, 5, 6} {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			shapedlinktest.Deterministic(t, seed)
			if n := runtime.GOMAXPROCS(0); n != 1 {
				t.Errorf("GOMAXPROCS is %d, want 1", n)
			}
			if p := debug.SetGCPercent(-1); p != -1 {
				t.Errorf("the GC percent is %d, want -1 (off)", p)
			}
			if l := debug.SetMemoryLimit(-1); l == math.MaxInt64 {
				t.Error("no memory limit while the collector is off")
			}
			_, _ = cryptorand.Read(draws[i][:])
		})
	}
	if draws[0] != draws[1] || draws[0] == draws[2] {
		t.Errorf("crypto/rand drew %x and %x with seed 5 and %x with seed 6", draws[0], draws[1], draws[2])
	}
	if n := runtime.GOMAXPROCS(0); n != 2 {
		t.Errorf("GOMAXPROCS is %d after the test, want 2 as before", n)
	}
	if p := debug.SetGCPercent(100); p != 100 {
		t.Errorf("the GC percent is %d after the test, want 100 as before", p)
	}
	if l := debug.SetMemoryLimit(-1); l != limit {
		t.Errorf("the memory limit is %d after the test, want %d as before", l, limit)
	}
}

// TestDeterministicFails: Deterministic fails a parallel test with the
// reason, and a test during which the collector ran. (Each runs in a
// child process, whose failure is the expected outcome.)
func TestDeterministicFails(t *testing.T) {
	for _, c := range []struct{ child, says string }{
		{"parallel", "drop t.Parallel from it and its parents"},
		{"collect", "the garbage collector ran 1 times during the test"},
	} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestDeterministicChild$", "-test.v")
		cmd.Env = append(os.Environ(), "SHAPEDLINKTEST_DETERMINISTIC_CHILD="+c.child)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.says) || !strings.Contains(string(out), "--- FAIL: TestDeterministicChild") {
			t.Errorf("%s: the child test ended with %v, want a failure saying %q:\n%s", c.child, err, c.says, out)
		}
	}
}

// TestDeterministicChild is TestDeterministicFails's child process.
func TestDeterministicChild(t *testing.T) {
	switch os.Getenv("SHAPEDLINKTEST_DETERMINISTIC_CHILD") {
	case "parallel":
		t.Run("sub", func(t *testing.T) {
			t.Parallel()
			shapedlinktest.Deterministic(t, 1)
		})
	case "collect":
		shapedlinktest.Deterministic(t, 1)
		runtime.GC()
	default:
		t.Skip("the child process of TestDeterministicFails")
	}
}
