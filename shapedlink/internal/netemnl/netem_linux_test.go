package netemnl

import (
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

func rootAttrs() netlink.QdiscAttrs {
	return netlink.QdiscAttrs{LinkIndex: 2, Handle: netlink.MakeHandle(1, 0), Parent: netlink.HANDLE_ROOT}
}

// nested parses the attributes after tc_netem_qopt in netem's options.
func nested(t *testing.T, opts *nl.RtAttr) map[uint16][]byte {
	t.Helper()
	attrs, err := nl.ParseRouteAttr(opts.Serialize()[4+24:]) // the header, tc_netem_qopt
	if err != nil {
		t.Fatal(err)
	}
	got := map[uint16][]byte{}
	for _, a := range attrs {
		got[a.Attr.Type&^unix.NLA_F_NESTED] = a.Value
	}
	return got
}

// TestAttrs: a direction's delay reaches netem in microseconds, its rate
// in bytes per second, its limit as is, and a loss term only when it has
// loss; describe writes it back in tc's words.
func TestAttrs(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		d       linkspec.Direction
		latency uint32
		rate    uint64
		line    string
	}{
		{linkspec.Direction{Delay: 40 * ms, RateMbit: 10, Limit: 110}, 40000, 1250000, "netem limit 110 delay 40ms rate 10Mbit"},
		{linkspec.Direction{Delay: 40 * ms, RateMbit: 10, Limit: 110, LossPct: 1}, 40000, 1250000, "netem limit 110 delay 40ms loss 1% rate 10Mbit"},
		{linkspec.Direction{Delay: 75 * ms, RateMbit: 2, Limit: 48, LossPct: 0.5}, 75000, 250000, "netem limit 48 delay 75ms loss 0.5% rate 2Mbit"},
		{linkspec.Direction{Delay: 2500 * time.Microsecond, RateMbit: 1000, Limit: 635}, 2500, 125000000, "netem limit 635 delay 2.5ms rate 1Gbit"},
		{linkspec.Direction{Delay: 250 * time.Microsecond, RateMbit: 40000, Limit: 7}, 250, 5000000000, "netem limit 7 delay 250us rate 40Gbit"},
	} {
		a := netemAttrs(c.d)
		if a.Latency != c.latency || a.Rate64 != c.rate || a.Limit != uint32(c.d.Limit) || a.Loss != float32(c.d.LossPct) {
			t.Errorf("%s: attrs %+v, want latency %d us, rate %d B/s", c.d.Describe(), a, c.latency, c.rate)
		}
		if float64(a.Rate64)*8/1e6 != c.d.RateMbit {
			t.Errorf("rate %d bytes/s for %v Mbit/s", a.Rate64, c.d.RateMbit)
		}
		q := Root(rootAttrs(), c.d)
		if c.d.LossPct == 0 && q.Loss != 0 {
			t.Errorf("%s: a loss-free direction produced a loss term (%d)", c.d.Describe(), q.Loss)
		}
		if got := describe(q); got != c.line {
			t.Errorf("described as %q, want %q", got, c.line)
		}
	}
}

// TestDelayInNanoseconds: netem gets every delay and jitter in
// nanoseconds (TCA_NETEM_LATENCY64, TCA_NETEM_JITTER64), because
// tc_netem_qopt's 64 ns ticks cannot hold a whole microsecond such as
// 500 us (7812.5 ticks); and a jitter's correlation is sent for a
// direction with no delay too, which the library would drop.
func TestDelayInNanoseconds(t *testing.T) {
	for _, c := range []struct {
		d             linkspec.Direction
		latency, jitt uint64
		delayCorr     bool
	}{
		{linkspec.Direction{Delay: 500 * time.Microsecond, RateMbit: 10, Limit: 11}, 500000, 0, false},
		{linkspec.Direction{Delay: 40001 * time.Microsecond, Jitter: time.Microsecond, RateMbit: 10, Limit: 110}, 40001000, 1000, false},
		{linkspec.Direction{Jitter: 500 * time.Microsecond, JitterCorr: 25, RateMbit: 10, Limit: 110}, 0, 500000, true},
	} {
		opts, err := Options(Root(rootAttrs(), c.d), c.d, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := nested(t, opts)
		u64 := func(typ uint16) (uint64, bool) {
			v, ok := got[typ]
			if !ok || len(v) != 8 {
				return 0, false
			}
			return binary.NativeEndian.Uint64(v), true
		}
		if v, ok := u64(tcaNetemLatency64); !ok || v != c.latency {
			t.Errorf("%s: TCA_NETEM_LATENCY64 %d (sent: %v), want %d ns", c.d.Describe(), v, ok, c.latency)
		}
		if v, ok := u64(tcaNetemJitter64); !ok || v != c.jitt {
			t.Errorf("%s: TCA_NETEM_JITTER64 %d (sent: %v), want %d ns", c.d.Describe(), v, ok, c.jitt)
		}
		corr, ok := got[nl.TCA_NETEM_CORR]
		if ok != c.delayCorr || ok && binary.NativeEndian.Uint32(corr) != netlink.Percentage2u32(float32(c.d.JitterCorr)) {
			t.Errorf("%s: TCA_NETEM_CORR %v (sent: %v), want the jitter's correlation sent: %v", c.d.Describe(), corr, ok, c.delayCorr)
		}
	}
}

// TestGEEncoding: the Gilbert-Elliott parameters are encoded as tc
// encodes them (rounded fractions of 2^32-1, with 1-h complemented into h)
// and described back in tc's words.
func TestGEEncoding(t *testing.T) {
	m := encodeGE(linkspec.GE{P: 1, R: 30, OneMinusH: 100, OneMinusK: 0.5})
	want := GEModel{P: 42949673, R: 1288490189, H: 0, K1: 21474836}
	if m != want {
		t.Errorf("encodeGE = %+v, want %+v", m, want)
	}
	if got := encodeGE(linkspec.GE{P: 1, R: 30, OneMinusH: 50}).H; got != 2147483647 {
		t.Errorf("1-h 50%%: h %d, want 2147483647", got)
	}
	if s := m.String(); s != "loss gemodel p 1% r 30% 1-h 100% 1-k 0.5%" {
		t.Errorf("String() = %q", s)
	}
	b := m.bytes()
	if len(b) != 16 || binary.NativeEndian.Uint32(b[4:]) != want.R || binary.NativeEndian.Uint32(b[12:]) != want.K1 {
		t.Errorf("bytes() = %x, want p, r, h, k1 as native u32s", b)
	}
}

// TestFourStateEncoding: the 4-state model reaches netem as
// TCA_NETEM_LOSS holding NETEM_LOSS_GI, struct tc_netem_gimodel's five
// u32s in its order (p13, p31, p32, p14, p23: not the order tc reads
// them), and reads back in tc's words, the emulator's words too.
func TestFourStateEncoding(t *testing.T) {
	d := linkspec.Direction{Delay: 10 * time.Millisecond, RateMbit: 10, Limit: 35, FourState: linkspec.FourState{P13: 1, P31: 30, P32: 10, P23: 40, P14: 0.5}, HasFourState: true}
	opts, err := Options(Root(rootAttrs(), d), d, 0)
	if err != nil {
		t.Fatal(err)
	}
	models, err := nl.ParseRouteAttr(nested(t, opts)[tcaNetemLoss])
	if err != nil {
		t.Fatal(err)
	}
	if len(models) != 1 || models[0].Attr.Type != netemLossGI {
		t.Fatalf("TCA_NETEM_LOSS holds %d models (%+v); want NETEM_LOSS_GI (1) alone", len(models), models)
	}
	gi := models[0].Value
	// Rounded fractions of 2^32-1: 1%, 30%, 10%, 0.5%, 40%.
	want := []uint32{42949673, 1288490189, 429496730, 21474836, 1717986918}
	if len(gi) != 20 {
		t.Fatalf("NETEM_LOSS_GI carries %d bytes (%x), want 20", len(gi), gi)
	}
	for i, w := range want {
		if got := binary.NativeEndian.Uint32(gi[4*i:]); got != w {
			t.Errorf("tc_netem_gimodel field %d = %d, want %d", i, got, w)
		}
	}
	if s := fourStateString(d.FourState.Netem()); s != "loss state p13 1% p31 30% p32 10% p23 40% p14 0.5%" {
		t.Errorf("read back as %q", s)
	}
	if w := d.Describe(); !strings.Contains(w, " loss state p13 1% p31 30% p32 10% p23 40% p14 0.5% ") {
		t.Errorf("the emulator's applied line %q does not name the model in tc's words", w)
	}
}

// TestCorruptDescribe: corruption is written as netem's corrupt term.
func TestCorruptDescribe(t *testing.T) {
	d := linkspec.Direction{Delay: 40 * time.Millisecond, RateMbit: 10, Limit: 110, CorruptPct: 0.5, CorruptCorr: 25}
	if n := describe(Root(rootAttrs(), d)); !strings.Contains(n, " corrupt 0.5% 25%") {
		t.Errorf("netem's line %q does not say corrupt 0.5%% 25%%", n)
	}
}
