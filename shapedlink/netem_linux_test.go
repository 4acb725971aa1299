package shapedlink

import (
	"bytes"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/netemnl"
)

// TestNetemShortForm: a profile without options gives both directions the
// same netem options (seeds aside): delay RTT/2, the rate, the default or
// named limit, and a loss term only when the profile has loss. (The encoding of
// a direction is package netemnl's, tested there.)
func TestNetemShortForm(t *testing.T) {
	for _, c := range []struct {
		profile string
		delay   time.Duration
		rate    float64
		limit   int
		loss    float64
		line    string
	}{
		{"80:10", 40 * time.Millisecond, 10, 110, 0, "netem limit 110 delay 40ms rate 10Mbit"},
		{"80:10:1", 40 * time.Millisecond, 10, 110, 1, "netem limit 110 delay 40ms loss 1% rate 10Mbit"},
		{"150:2:0.5", 75 * time.Millisecond, 2, 48, 0.5, "netem limit 48 delay 75ms loss 0.5% rate 2Mbit"},
		{"5:1000", 2500 * time.Microsecond, 1000, 635, 0, "netem limit 635 delay 2.5ms rate 1Gbit"},
		{"0.5:40000@7", 250 * time.Microsecond, 40000, 7, 0, "netem limit 7 delay 250us rate 40Gbit"},
	} {
		p, err := ParseProfile(c.profile)
		if err != nil {
			t.Fatal(err)
		}
		d, u := p.Direction(Down), p.Direction(Up)
		do, err := netemnl.Options(netemnl.Root(netlinkRoot(), d), d, 0)
		if err != nil {
			t.Fatal(err)
		}
		uo, err := netemnl.Options(netemnl.Root(netlinkRoot(), u), u, 0)
		if err != nil {
			t.Fatal(err)
		}
		if ds, us := do.Serialize(), uo.Serialize(); !bytes.Equal(ds, us) {
			t.Errorf("%s: down's netem options %x and up's %x differ", c.profile, ds, us)
		}
		if d.Delay != c.delay || d.RateMbit != c.rate || d.Limit != c.limit || d.LossPct != c.loss || d.Random() != (c.loss > 0) {
			t.Errorf("%s: direction %+v, want delay %v, rate %v, limit %d, loss %v and nothing else", c.profile, d, c.delay, c.rate, c.limit, c.loss)
		}
		if got, err := netemnl.ReadBack(netemnl.Root(netlinkRoot(), d), netemnl.Extras{}, d); err != nil || got != c.line {
			t.Errorf("%s: described as %q (%v), want %q", c.profile, got, err, c.line)
		}
	}
}
