package shapedlink

import (
	"testing"

	"github.com/vishvananda/netlink"
)

// TestNetemEncoding checks the conversion of a profile into netem's
// attributes and back into the tc-like line, without needing sch_netem:
// delay RTT/2 in microseconds, rate in bytes per second, the limit, and a
// loss term only when the profile has loss.
func TestNetemEncoding(t *testing.T) {
	cases := []struct {
		profile string
		latency uint32
		rate    uint64
		limit   uint32
		loss    float32
		line    string
	}{
		{"80:10", 40000, 1250000, 110, 0, "netem limit 110 delay 40ms rate 10Mbit"},
		{"80:10:1", 40000, 1250000, 110, 1, "netem limit 110 delay 40ms loss 1% rate 10Mbit"},
		{"150:2:0.5", 75000, 250000, 48, 0.5, "netem limit 48 delay 75ms loss 0.5% rate 2Mbit"},
		{"5:1000", 2500, 125000000, 635, 0, "netem limit 635 delay 2.5ms rate 1Gbit"},
		{"0.5:40000@7", 250, 5000000000, 7, 0, "netem limit 7 delay 250us rate 40Gbit"},
	}
	for _, c := range cases {
		p, err := ParseProfile(c.profile)
		if err != nil {
			t.Fatal(err)
		}
		// A profile without options: both directions byte-identical to
		// what the profile gave before directions had options.
		if d, u := netemAttrs(p.Direction(Down)), netemAttrs(p.Direction(Up)); d != u {
			t.Errorf("%s: down %+v and up %+v differ", c.profile, d, u)
		}
		a := netemAttrs(p.Direction(Up))
		if a.Latency != c.latency || a.Rate64 != c.rate || a.Limit != c.limit || a.Loss != c.loss {
			t.Errorf("%s: attrs %+v (rate %d), want latency %d us, rate %d B/s, limit %d, loss %v",
				c.profile, a, a.Rate64, c.latency, c.rate, c.limit, c.loss)
		}
		q := netlink.NewNetem(netlink.QdiscAttrs{}, a)
		if c.loss == 0 && q.Loss != 0 {
			t.Errorf("%s: a loss-free profile produced a loss term (%d)", c.profile, q.Loss)
		}
		if got := describeNetem(q); got != c.line {
			t.Errorf("%s: described as %q, want %q", c.profile, got, c.line)
		}
	}
}
