package shapedlink

import (
	"encoding/binary"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
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

// TestNetemDelayInNanoseconds: netem gets every delay and jitter in
// nanoseconds (TCA_NETEM_LATENCY64, TCA_NETEM_JITTER64), because
// tc_netem_qopt's 64 ns ticks cannot hold a whole microsecond such as
// 500 us (7812.5 ticks); and a jitter's correlation is sent for a
// direction with no delay too, which the library would drop.
func TestNetemDelayInNanoseconds(t *testing.T) {
	for _, c := range []struct {
		profile       string
		latency, jitt uint64
		delayCorr     bool
	}{
		{"1:10", 500000, 0, false},
		{"80.002:10,jitter=0.001", 40001000, 1000, false},
		{"80:10,down.delay=0,down.jitter=0.5/uniform/25", 0, 500000, true},
	} {
		p, err := ParseProfile(c.profile)
		if err != nil {
			t.Fatal(err)
		}
		d := p.Direction(Down)
		q := netlink.NewNetem(netlink.QdiscAttrs{}, netemAttrs(d))
		opts, err := netemOptions(q, d, 0)
		if err != nil {
			t.Fatal(err)
		}
		b := opts.Serialize()
		attrs, err := nl.ParseRouteAttr(b[4+24:]) // the header, tc_netem_qopt
		if err != nil {
			t.Fatal(err)
		}
		got := map[uint16][]byte{}
		for _, a := range attrs {
			got[a.Attr.Type] = a.Value
		}
		u64 := func(typ uint16) (uint64, bool) {
			v, ok := got[typ]
			if !ok || len(v) != 8 {
				return 0, false
			}
			return binary.NativeEndian.Uint64(v), true
		}
		if v, ok := u64(tcaNetemLatency64); !ok || v != c.latency {
			t.Errorf("%s: TCA_NETEM_LATENCY64 %d (sent: %v), want %d ns", c.profile, v, ok, c.latency)
		}
		if v, ok := u64(tcaNetemJitter64); !ok || v != c.jitt {
			t.Errorf("%s: TCA_NETEM_JITTER64 %d (sent: %v), want %d ns", c.profile, v, ok, c.jitt)
		}
		corr, ok := got[nl.TCA_NETEM_CORR]
		if ok != c.delayCorr || ok && binary.NativeEndian.Uint32(corr) != netlink.Percentage2u32(float32(d.JitterCorr)) {
			t.Errorf("%s: TCA_NETEM_CORR %v (sent: %v), want the jitter's correlation sent: %v", c.profile, corr, ok, c.delayCorr)
		}
		// The rate, in netem's bytes per second, is the profile's exactly.
		if a := netemAttrs(d); float64(a.Rate64)*8/1e6 != d.RateMbit {
			t.Errorf("%s: rate %d bytes/s for %v Mbit/s", c.profile, a.Rate64, d.RateMbit)
		}
	}
}
