package measure_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/stats"
	"github.com/shakenfist/quicbench/transport"
)

// TestArmInVirtualTime: both QUIC arms run the workload over an
// in-process 80:10:1 link in a synctest bubble, so the run's seconds are
// virtual: every round trip the interactive channel measured is at least
// the link's 80 ms, and the saturating channel moved data. (Packets of
// 1280 bytes: see transport.Options.PacketSize.)
func TestArmInVirtualTime(t *testing.T) {
	w := spicelike.Defaults()
	w.Duration, w.Warmup = 6*time.Second, time.Second
	for _, arm := range []measure.Arm{measure.QUIC, measure.QUICPerChannel} {
		t.Run(arm.Name(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				link := shapedlinktest.Sim(t, "80:10:1", shapedlink.Options{Seed: 3})
				start := time.Now()
				r, err := measure.Run(context.Background(), measure.OverLink(link), arm, w, transport.Options{PacketSize: 1280})
				if err != nil {
					t.Fatal(err)
				}
				s, err := stats.SummariseRepeat(r.Repeat, w.Warmup)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%s: %v virtual, %d samples, p50 %v p95 %v, %.2f Mbit/s", arm.Name(), time.Since(start), s.N, s.P50, s.P95, r.Repeat.ThroughputMbit)
				if s.P50 < 80*time.Millisecond || r.Repeat.ThroughputMbit <= 0 {
					t.Errorf("p50 %v (the link's round trip is 80 ms), %.2f Mbit/s", s.P50, r.Repeat.ThroughputMbit)
				}
			})
		})
	}
}

// TestArmInVirtualTimeRefusesLargePackets: in a synctest bubble the QUIC
// arms with packets over 1280 bytes, the default 1400 included, are
// refused at once, saying to set transport.Options.PacketSize to 1280.
// (They used to hang until the test's timeout: quic-go v0.65 spins in its
// send loop there. A wall-clock watchdog turns a hang into a failure.)
func TestArmInVirtualTimeRefusesLargePackets(t *testing.T) {
	w := spicelike.Defaults()
	w.Duration, w.Warmup = 6*time.Second, time.Second
	for _, size := range []int{0, 1400} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			watchdog := time.AfterFunc(time.Minute, func() {
				panic(fmt.Sprintf("measure.Run with PacketSize %d in a synctest bubble has not returned after a minute of wall time: it hangs", size))
			})
			defer watchdog.Stop()
			synctest.Test(t, func(t *testing.T) {
				link := shapedlinktest.Sim(t, "80:10:1", shapedlink.Options{Seed: 3})
				_, err := measure.Run(context.Background(), measure.OverLink(link), measure.QUIC, w, transport.Options{PacketSize: size})
				if err == nil || !strings.Contains(err.Error(), "set Options.PacketSize to 1280") {
					t.Errorf("PacketSize %d in virtual time: %v, want a refusal saying to set 1280", size, err)
				}
			})
		})
	}
}

// TestArmRepeatsInVirtualTime: under shapedlinktest.Deterministic an
// arm over the same seeded in-process link gives the same repeat, every
// sample, run after run: nothing in the arm or the workload draws from a
// source Deterministic does not seed, or depends on more than one P
// (without it the runs differ). Three runs, of which at most one may
// differ: the scheduler's wall-clock time slice, which Deterministic
// cannot stop, can reorder a busy machine's run.
func TestArmRepeatsInVirtualTime(t *testing.T) {
	w := spicelike.Defaults()
	w.Duration, w.Warmup = 6*time.Second, time.Second
	var runs []stats.Repeat
	for i := range 3 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			shapedlinktest.Deterministic(t, 1)
			synctest.Test(t, func(t *testing.T) {
				link := shapedlinktest.Sim(t, "80:10:1", shapedlink.Options{Seed: 3})
				r, err := measure.Run(context.Background(), measure.OverLink(link), measure.QUIC, w, transport.Options{PacketSize: 1280})
				if err != nil {
					t.Fatal(err)
				}
				runs = append(runs, r.Repeat)
			})
		})
	}
	if len(runs) != 3 {
		t.FailNow()
	}
	same := func(a, b stats.Repeat) bool { return reflect.DeepEqual(a, b) }
	if !same(runs[0], runs[1]) && !same(runs[0], runs[2]) && !same(runs[1], runs[2]) {
		for i, r := range runs {
			t.Logf("run %d: %d samples, %d timeouts, %.4f Mbit/s", i, len(r.Samples), r.Timeouts, r.ThroughputMbit)
		}
		t.Errorf("no two of three runs of the same seeded arm over the same seeded link gave the same repeat")
	}
}
