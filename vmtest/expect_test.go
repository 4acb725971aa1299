package vmtest

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The netem parameters one direction of a link carries for four profiles
// (expectNetem).
func Example() {
	for _, p := range []string{"80:10", "80:10:1", "150:2:0.5", "40:10@20"} {
		n, err := expectNetem(p)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%-10s delay %v rate %d B/s limit %d loss %g%%\n", p, n.Delay, n.RateBytes, n.Limit, n.LossPct)
	}
	// Output:
	// 80:10      delay 40ms rate 1250000 B/s limit 110 loss 0%
	// 80:10:1    delay 40ms rate 1250000 B/s limit 110 loss 1%
	// 150:2:0.5  delay 75ms rate 250000 B/s limit 48 loss 0.5%
	// 40:10@20   delay 20ms rate 1250000 B/s limit 20 loss 0%
}

func TestExpect(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want netemParams
	}{
		{"80:10", netemParams{Delay: 40 * time.Millisecond, RateBytes: 1_250_000, Limit: 110}},
		{"150:2:1", netemParams{Delay: 75 * time.Millisecond, RateBytes: 250_000, Limit: 48, LossPct: 1}},
		{"1:1", netemParams{Delay: 500 * time.Microsecond, RateBytes: 125_000, Limit: 11}},        // 1/8 rounds up to 1
		{"20.5:0.8", netemParams{Delay: 10250 * time.Microsecond, RateBytes: 100_000, Limit: 13}}, // 16.4/8 = 2.05 -> 3
		{"80:100:2.5@1000", netemParams{Delay: 40 * time.Millisecond, RateBytes: 12_500_000, Limit: 1000, LossPct: 2.5}},
		{"16:10", netemParams{Delay: 8 * time.Millisecond, RateBytes: 1_250_000, Limit: 30}}, // exactly 20: no rounding up
	} {
		got, err := expectNetem(tc.in)
		if err != nil {
			t.Errorf("expectNetem(%q): %v", tc.in, err)
			continue
		}
		if got != tc.want {
			t.Errorf("expectNetem(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
	for _, bad := range []string{"80", "80:0", "-1:10", "80:10:100", "80:10:x", "80:10@0", "80:10@1.5", "80:10:1:2"} {
		if _, err := expectNetem(bad); err == nil || !strings.Contains(err.Error(), "vmtest: profile") {
			t.Errorf("expectNetem(%q) error = %v, want a profile error", bad, err)
		}
	}
}

func TestLossFraction(t *testing.T) {
	if got := lossFraction(0); got != 0 {
		t.Errorf("lossFraction(0) = %d, want 0", got)
	}
	if got, want := lossFraction(1), uint32(42949673); got != want {
		t.Errorf("lossFraction(1) = %d, want %d", got, want)
	}
	if got, want := lossFraction(50), uint32(2147483648); got != want {
		t.Errorf("lossFraction(50) = %d, want %d", got, want)
	}
}
