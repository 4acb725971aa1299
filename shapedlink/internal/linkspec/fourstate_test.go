package linkspec

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestFourStateOption: loss=state:... reads p13/p31/p32/p23/p14 in
// percent, the ones left out taking tc's defaults (p31 100-p13, p32 0,
// p23 100, p14 0), writes back the shortest form that reads the same, and
// replaces any other loss model.
func TestFourStateOption(t *testing.T) {
	for _, c := range []struct {
		in   string
		want FourState
		out  string
	}{
		{"state:1", FourState{P13: 1, P31: 99, P23: 100}, "state:1"},
		{"state:1/30", FourState{P13: 1, P31: 30, P23: 100}, "state:1/30"},
		{"state:1/30/10", FourState{P13: 1, P31: 30, P32: 10, P23: 100}, "state:1/30/10"},
		{"state:1/30/10/40", FourState{P13: 1, P31: 30, P32: 10, P23: 40}, "state:1/30/10/40"},
		{"state:1/30/10/40/0.5", FourState{P13: 1, P31: 30, P32: 10, P23: 40, P14: 0.5}, "state:1/30/10/40/0.5"},
		{"state:1%/30%/10%/40%/0.5%", FourState{P13: 1, P31: 30, P32: 10, P23: 40, P14: 0.5}, "state:1/30/10/40/0.5"},
		// Defaults written out are left out again.
		{"state:1/99/0/100/0", FourState{P13: 1, P31: 99, P23: 100}, "state:1"},
		{"state:0.3/99.7", FourState{P13: 0.3, P31: 99.7, P23: 100}, "state:0.3"},
		// A default before one that is not stays.
		{"state:1/99/0/100/0.5", FourState{P13: 1, P31: 99, P23: 100, P14: 0.5}, "state:1/99/0/100/0.5"},
		{"state:0", FourState{P31: 100, P23: 100}, "state:0"},
	} {
		var o DirOptions
		if err := o.Set("loss", c.in); err != nil {
			t.Errorf("loss=%s: %v", c.in, err)
			continue
		}
		d := Direction{LossPct: 5, LossCorr: 10, GE: GE{P: 1, R: 2}, HasGE: true}
		o.Apply(&d)
		if !d.HasFourState || d.FourState != c.want || d.HasGE || d.LossPct != 0 || d.LossCorr != 0 {
			t.Errorf("loss=%s: %+v (4-state %v, GE %v, loss %v/%v), want %+v alone", c.in, d.FourState, d.HasFourState, d.HasGE, d.LossPct, d.LossCorr, c.want)
		}
		if v, _ := o.Value("loss"); v != c.out {
			t.Errorf("loss=%s written as %q, want %q", c.in, v, c.out)
		}
	}
	// Another loss model replaces it.
	var o DirOptions
	d := Direction{}
	for _, v := range []string{"state:1/30", "ge:1/30"} {
		if err := o.Set("loss", v); err != nil {
			t.Fatal(err)
		}
		o.Apply(&d)
	}
	if d.HasFourState || d.FourState != (FourState{}) || !d.HasGE {
		t.Errorf("loss=ge after loss=state: %+v", d)
	}
	if err := o.Set("loss", "2"); err != nil {
		t.Fatal(err)
	}
	d = Direction{FourState: FourState{P13: 1}, HasFourState: true}
	o.Apply(&d)
	if d.HasFourState || d.LossPct != 2 {
		t.Errorf("loss=2 on a 4-state direction: %+v", d)
	}
}

// TestFourStateRefused: a malformed or impossible 4-state model is refused
// naming the parameter and what to write.
func TestFourStateRefused(t *testing.T) {
	for in, want := range map[string]string{
		"state:":                       `state p13 "" is empty`,
		"state:1/2/3/4/5/6":            "has 6 parts; want state:p13 followed by up to four",
		"state:x":                      `state p13 "x" is not a decimal number`,
		"state:1/101":                  `state p31 "101" is more than 100%`,
		"state:1/30/-1":                `state p32 "-1" is not a decimal number`,
		"state:1/30/10/200":            `state p23 "200" is more than 100%`,
		"state:1/30/10/40/y":           `state p14 "y"`,
		"state:1/30/10/40/0.000000001": "state p14",
		"state:60/30/10/40/50":         "p13+p14 = 110%",
		"state:1/70/40":                "p31+p32 = 110%",
		"state:99.9999999":             "state p31 0.0000001 is below",
	} {
		var o DirOptions
		err := o.Set("loss", in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("loss=%s: %v, want an error saying %q", in, err, want)
		}
	}
	// p31 defaults to 100-p13, which can be below MinPct: named too.
	var o DirOptions
	if err := o.Set("loss", "state:99.999999"); err == nil || !strings.Contains(err.Error(), "state p31 0.000001") {
		t.Errorf("loss=state:99.999999: %v, want its default p31 named", err)
	}
	// At 100% together the chances are accepted.
	for _, in := range []string{"state:50/50/50/50/50", "state:100/100", "state:0/0/0/0/100"} {
		if err := o.Set("loss", in); err != nil {
			t.Errorf("loss=%s: %v", in, err)
		}
	}
}

// TestFourStateCheck: Check refuses a 4-state model that loses every
// packet in the long run, one beside another loss model, one whose
// loss a schedule changes, and parameters out of range.
func TestFourStateCheck(t *testing.T) {
	base := Direction{Delay: time.Millisecond, RateMbit: 1, Limit: 10}
	four := func(f FourState) func(*Direction) {
		return func(d *Direction) { d.FourState, d.HasFourState = f, true }
	}
	for name, c := range map[string]struct {
		mod       func(*Direction)
		key, want string
	}{
		"burst never left": {four(FourState{P13: 1, P23: 100}), "loss", "loses 100% of packets"},
		"over 100":         {four(FourState{P13: 1, P31: 120, P23: 100}), "loss", "state p31 120 is more than 100%"},
		"negative":         {four(FourState{P13: 1, P31: 30, P23: 100, P14: -1}), "loss", "state p14 -1 is negative"},
		"sum from 1":       {four(FourState{P13: 80, P31: 30, P23: 100, P14: 30}), "loss", "p13+p14 = 110%"},
		"with loss": {func(d *Direction) {
			d.FourState, d.HasFourState, d.LossPct = FourState{P13: 1, P31: 30, P23: 100}, true, 1
		}, "loss", "one loss model"},
		"with GE": {func(d *Direction) {
			d.FourState, d.HasFourState, d.GE, d.HasGE = FourState{P13: 1, P31: 30, P23: 100}, true, GE{P: 1, R: 10, OneMinusH: 100}, true
		}, "loss", "one loss model"},
		"scheduled loss": {func(d *Direction) {
			d.FourState, d.HasFourState = FourState{P13: 1, P31: 30, P23: 100}, true
			d.Schedule, d.Changes = "s", []Change{{Set: "loss", Value: 1}}
		}, "schedule", "4-state model (state:1/30) replaces"},
	} {
		d := base
		c.mod(&d)
		k, r := d.CheckLoaded()
		if k != c.key || !strings.Contains(r, c.want) {
			t.Errorf("%s: %q %q, want %q and a reason saying %q", name, k, r, c.key, c.want)
		}
	}
	d := base
	d.FourState, d.HasFourState = FourState{P13: 1, P31: 30, P32: 10, P23: 40, P14: 0.5}, true
	d.Schedule, d.Changes = "s", []Change{{At: time.Second, Set: "down"}, {At: 2 * time.Second, Set: "up"}}
	if k, r := d.CheckLoaded(); r != "" {
		t.Errorf("a 4-state model with a blackout: %s %s", k, r)
	}
	if !d.Random() {
		t.Error("a 4-state direction does not say it draws random numbers")
	}
}

// TestFourStateMeanLoss: the long-run loss, by hand for chains whose
// answer is plain, including those that settle in a state never left.
func TestFourStateMeanLoss(t *testing.T) {
	for _, c := range []struct {
		f    FourState
		want float64
	}{
		{defaultFourState(7), 7},                             // independent loss of p13
		{FourState{P13: 0, P31: 50, P23: 100, P14: 100}, 50}, // 1, 4, 1, 4, ...
		{FourState{P13: 0, P31: 50, P23: 100, P14: 25}, 20},  // one in five
		{FourState{P13: 10, P31: 0, P32: 0, P23: 100}, 100},  // the burst is never left
		{FourState{P13: 10, P31: 0, P32: 20, P23: 60}, 75},   // a burst for ever, 3 of 4 lost
		{FourState{P13: 10, P31: 40, P32: 20, P23: 0}, 0},    // state 2 for ever
		// 1 -> 3 at 10%, 3 -> 1 at 40%: 1/4 of the time in 3 per unit in
		// 1; 3 -> 2 at 20%, 2 -> 3 at 50%: 0.4 of that in 2; 1 -> 4 at 5%.
		{FourState{P13: 10, P31: 40, P32: 20, P23: 50, P14: 5}, 100 * (0.25 + 0.05) / (1 + 0.05 + 0.25 + 0.1)},
		{FourState{P13: 0, P31: 0, P23: 0}, 0},
	} {
		if got := c.f.MeanLoss(); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: MeanLoss %v, want %v", c.f, got, c.want)
		}
	}
}

// TestFourStateNetem: the parameters reach netem as tc's rounded
// fractions of 2^32-1, in struct tc_netem_gimodel's fields, and two that
// add up to 100% never wrap the u32 sum netem compares a draw with.
func TestFourStateNetem(t *testing.T) {
	n := FourState{P13: 1, P31: 30, P32: 10, P23: 40, P14: 0.5}.Netem()
	want := FourStateNetem{P13: 42949673, P31: 1288490189, P32: 429496730, P14: 21474836, P23: 1717986918}
	if n != want {
		t.Errorf("Netem = %+v, want %+v", n, want)
	}
	for _, f := range []FourState{
		{P13: 50, P31: 50, P32: 50, P23: 50, P14: 50},
		{P13: 33.3, P31: 66.7, P32: 33.3, P23: 100, P14: 66.7},
		{P13: 100, P31: 100},
	} {
		n := f.Netem()
		if uint64(n.P13)+uint64(n.P14) > math.MaxUint32 || uint64(n.P31)+uint64(n.P32) > math.MaxUint32 {
			t.Errorf("%s: %+v wraps a u32 sum", f, n)
		}
		if d := int64(netemU32(f.P13)) - int64(n.P13); d < 0 || d > 1 {
			t.Errorf("%s: p13 %d, want %d or one less", f, n.P13, netemU32(f.P13))
		}
	}
}

// TestFourStateDescribe: the emulator's applied line names the model in
// tc's words, with all five parameters.
func TestFourStateDescribe(t *testing.T) {
	d := Direction{Delay: 10 * time.Millisecond, RateMbit: 10, Limit: 35, FourState: defaultFourState(1), HasFourState: true, Seed: 3}
	want := "delay 10ms rate 10Mbit limit 35 loss state p13 1% p31 99% p32 0% p23 100% p14 0% seed 3"
	if got := d.Describe(); got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
}
