package main

import (
	"testing"
	"time"
)

func TestWilsonContainsTruth(t *testing.T) {
	for _, c := range []struct {
		k, n int
		p    float64
		in   bool
	}{{0, 4000, 0, true}, {40, 4000, 0.01, true}, {40, 4000, 0.02, false}, {4000, 4000, 1, true}, {10, 100, 0.5, false}} {
		lo, hi := wilson(c.k, c.n)
		if got := c.p >= lo && c.p <= hi; got != c.in {
			t.Errorf("wilson(%d, %d) = [%v, %v]: contains %v is %v, want %v", c.k, c.n, lo, hi, c.p, got, c.in)
		}
	}
}

func TestQuantileNearestRank(t *testing.T) {
	xs := []time.Duration{5, 1, 4, 2, 3}
	if got := quantile(xs, 0.5); got != 3 {
		t.Errorf("p50 of 1..5 = %v, want 3", got)
	}
	if got := quantile(xs, 0.99); got != 5 {
		t.Errorf("p99 of 1..5 = %v, want 5", got)
	}
}

func TestLossy(t *testing.T) {
	for p, want := range map[string]bool{"80:10": false, "80:10:1": true, "80:10:0": false, "80:10@50": false, "80:10:1@50": true, "80:10,up.loss=1": true, "80:10:1,loss=0": false, "20:50,up.rate=5": false} {
		if got := (Result{Profile: p}).lossy(); got != want {
			t.Errorf("lossy(%q) = %v, want %v", p, got, want)
		}
	}
}

// TestWireShareNeverAboveTheRate: a flow whose wire share exceeds the
// configured rate by more than the allowance is reported as an error, not
// as a figure; one within it is kept.
func TestWireShareNeverAboveTheRate(t *testing.T) {
	long := maxWirePct(6*time.Second, 10e6)
	if long != MaxWirePct {
		t.Errorf("a 6 s window at 10 Mbit/s allows %.2f%%, want %.1f%%", long, MaxWirePct)
	}
	short := maxWirePct(400*time.Millisecond, 10e6) // edges 2*1.2112 ms + 2 ms
	if short < 101.09 || short > 101.12 {
		t.Errorf("a 400 ms window at 10 Mbit/s allows %.3f%%, want 101.11%%", short)
	}
	for _, c := range []struct {
		pct, limit float64
		wantE      bool
	}{{106.8, long, true}, {100.6, long, true}, {100.5, long, false}, {97.0, long, false},
		{101.0, short, false}, {101.2, short, true}} {
		b := Bulk{CC: "bbr", WirePct: c.pct, WireFrom: "shaper"}
		checkWire(&b, c.limit)
		if got := b.Error != ""; got != c.wantE {
			t.Errorf("wire %.1f%% against %.2f%%: error %q, want an error: %v", c.pct, c.limit, b.Error, c.wantE)
		}
	}
	b := Bulk{WirePct: 120, Error: "dial: refused"}
	if checkWire(&b, long); b.Error != "dial: refused" {
		t.Errorf("an earlier error was replaced: %q", b.Error)
	}
}
