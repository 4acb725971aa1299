package main

import (
	"encoding/json"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/examples/internal/cmdtest"
	"github.com/shakenfist/quicbench/shapedlink/calibrate"
)

// TestGSOLossMode runs -gsoloss small: 2 s of UDP_SEGMENT writes at 60%
// of a 100 Mbit/s link with 1% loss in each offload mode, and with
// Gilbert-Elliott loss keeping offloads. Nothing but the configured loss
// drops a datagram, so the receiver misses exactly the datagrams the
// shaper's loss took, the figure is judged, the configured mean loss is
// inside its interval (the seed fixes the draws) and the bursts' mean
// length is within 3.29 standard deviations of the model's; keeping
// offloads, the writes reach the shaper as super-packets.
func TestGSOLossMode(t *testing.T) {
	for _, tc := range []struct{ name, mode, profile string }{
		{"wire", "wire", "5:100:1"},
		{"keep", "keep", "5:100:1"},
		{"keep-ge", "keep", "5:100,loss=ge:1/10"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := cmdtest.Run(t, 0, cmdtest.OpenDir(t, 0), "-json", "-profiles", "", "-sweep", "", "-offload", tc.mode, "-gsoloss", tc.profile, "-gsoloss-time", "2s")
			cmdtest.SkipIfNoUserNS(t, c)
			if c.Code != 0 {
				t.Fatalf("exit code %d, want 0; stderr:\n%s", c.Code, c.Stderr)
			}
			var rep calibrate.Report
			if err := json.Unmarshal([]byte(c.Stdout), &rep); err != nil || rep.GSOLoss == nil {
				t.Fatalf("stdout is not a report with a -gsoloss figure (%v):\n%s", err, c.Stdout)
			}
			g := rep.GSOLoss
			t.Logf("%s: sent %d, lost %d (%.3f%% [%.3f,%.3f] of %.3g%%), bursts %.2f of %.2f; shaper received %d, lost %d; super-packets in %d out %d; GRO %v, %d coalesced; unjudged %q",
				tc.name, g.Sent, g.Lost, g.LossPct, g.LossLoPct, g.LossHiPct, g.LossWantPct, g.MeanBurst, g.BurstWant, g.ShaperReceived, g.ShaperLossDrops, g.SuperPacketsIn, g.SuperPacketsOut, g.GRO, g.Coalesced, g.Unjudged)
			if g.Error != "" || g.Offload != tc.mode || g.Profile != tc.profile || g.Batch < 1 || g.Sent < 1000 {
				t.Fatalf("%+v: want %s in %s mode, over a thousand datagrams sent", g, tc.profile, tc.mode)
			}
			if !g.Shaper || g.ShaperReceived != uint64(g.Sent) || uint64(g.Lost) != g.ShaperLossDrops || g.Unjudged != "" || g.Malformed != 0 {
				t.Errorf("the shaper received %d of %d and lost %d, the receiver missed %d, %d malformed, unjudged %q: want every datagram accounted for by the configured loss",
					g.ShaperReceived, g.Sent, g.ShaperLossDrops, g.Lost, g.Malformed, g.Unjudged)
			}
			if !g.Inside || g.LossWantPct <= 0 {
				t.Errorf("configured %g%% outside the measured [%.3f, %.3f]", g.LossWantPct, g.LossLoPct, g.LossHiPct)
			}
			// A burst's length is geometric with mean b: its standard
			// deviation is sqrt(b(b-1)).
			if bursts := float64(g.Lost) / g.MeanBurst; g.Lost == 0 || math.Abs(g.MeanBurst-g.BurstWant) > 3.29*math.Sqrt(g.BurstWant*(g.BurstWant-1)/bursts) {
				t.Errorf("mean burst %.3f over %.0f bursts, configured %.3f", g.MeanBurst, bursts, g.BurstWant)
			}
			udpSegOff := strings.Contains(strings.Join(g.Applied, " "), "UDP segmentation offload off")
			if tc.mode == "keep" && !udpSegOff && g.SuperPacketsIn == 0 {
				t.Error("keeping offloads, no UDP_SEGMENT write reached the shaper as a super-packet")
			}
			if tc.mode == "wire" && g.SuperPacketsIn != 0 {
				t.Errorf("wire-sized, %d super-packets reached the shaper", g.SuperPacketsIn)
			}
		})
	}
}

// TestQUICGSOMode runs -quicgso small: a quic-go transfer with its GSO
// for 3 s over a 100 Mbit/s link with 1% loss, keeping offloads. It
// carries data but never more than the rate; the shaper's per-datagram
// loss is within 3.29 standard deviations of 1% (99.9%); quic-go's
// super-packets reach the shaper when it reports GSO in use.
func TestQUICGSOMode(t *testing.T) {
	if os.Getenv("QUIC_GO_DISABLE_GSO") != "" {
		t.Skip("QUIC_GO_DISABLE_GSO is set: quic-go cannot send super-packets")
	}
	c := cmdtest.Run(t, 0, cmdtest.OpenDir(t, 0), "-json", "-profiles", "", "-sweep", "", "-offload", "keep", "-quicgso", "5:100:1", "-bulk", "3s")
	cmdtest.SkipIfNoUserNS(t, c)
	if c.Code != 0 {
		t.Fatalf("exit code %d, want 0; stderr:\n%s", c.Code, c.Stderr)
	}
	var rep calibrate.Report
	if err := json.Unmarshal([]byte(c.Stdout), &rep); err != nil || rep.QUICGSO == nil {
		t.Fatalf("stdout is not a report with a -quicgso figure (%v):\n%s", err, c.Stdout)
	}
	q := rep.QUICGSO
	t.Logf("goodput %.1f Mbit/s over %.2f s, GSO %v; shaper lost %d of %d (%.3f%% [%.3f,%.3f]); super-packets in %d out %d",
		q.GoodputMbit, q.Seconds, q.GSO, q.ShaperLossDrops, q.ShaperReceived, q.LossPct, q.LossLoPct, q.LossHiPct, q.SuperPacketsIn, q.SuperPacketsOut)
	if q.Error != "" || q.Offload != "keep" || q.Profile != "5:100:1" || q.RateMbit != 100 || q.LossWantPct != 1 {
		t.Fatalf("%+v: want 5:100:1 keeping offloads", q)
	}
	if q.GoodputMbit <= 0 || q.GoodputMbit > 100.5 || math.Abs(q.GoodputPct-q.GoodputMbit) > 1e-9 || q.Seconds < 1.5 {
		t.Errorf("goodput %.2f Mbit/s (%.2f%%) over %.2f s; want some, at most the rate, over the last two thirds of 3 s", q.GoodputMbit, q.GoodputPct, q.Seconds)
	}
	// Enough for the loss check to see a tenfold error; more is the
	// host's to give (463-677 in 3 s at load 40-50 on 2 cores).
	if !q.Shaper || q.ShaperReceived < 300 {
		t.Fatalf("the shaper counted %d datagrams", q.ShaperReceived)
	}
	n, p := float64(q.ShaperReceived), 0.01
	if lo, hi := n*p-3.29*math.Sqrt(n*p*(1-p)), n*p+3.29*math.Sqrt(n*p*(1-p)); float64(q.ShaperLossDrops) < lo || float64(q.ShaperLossDrops) > hi {
		t.Errorf("lost %d of %d, outside [%.0f, %.0f] for 1%%", q.ShaperLossDrops, q.ShaperReceived, lo, hi)
	}
	// The share and its interval are of the datagrams the shaper received.
	lo, hi := calibrate.Wilson(int(q.ShaperLossDrops), int(q.ShaperReceived))
	if want := 100 * float64(q.ShaperLossDrops) / n; math.Abs(q.LossPct-want) > 1e-9 || math.Abs(q.LossLoPct-100*lo) > 1e-9 || math.Abs(q.LossHiPct-100*hi) > 1e-9 {
		t.Errorf("loss %.4f%% [%.4f, %.4f]; want %.4f%% [%.4f, %.4f]", q.LossPct, q.LossLoPct, q.LossHiPct, want, 100*lo, 100*hi)
	}
	if q.Inside != (q.LossLoPct <= 1 && 1 <= q.LossHiPct) {
		t.Errorf("1%% inside [%.4f, %.4f] recorded as %v", q.LossLoPct, q.LossHiPct, q.Inside)
	}
	if q.GSO && q.SuperPacketsIn == 0 {
		t.Error("quic-go reports GSO in use but no super-packet reached the shaper")
	}
}
