package emulator

import (
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/shapedlink/internal/linkmodel"
	"github.com/shakenfist/quicbench/shapedlink/internal/linkspec"
)

// TestCutoff: with a departure window the loop sends ahead only when the
// head segment is due, and then no further than the window; without one,
// or with nothing due, it sends what is due and nothing more.
func TestCutoff(t *testing.T) {
	const us = int64(time.Microsecond)
	loop := func(window int64, dues ...int64) *dirLoop {
		l := &dirLoop{window: window}
		l.carry = linkmodel.NewCarrier(linkmodel.New(linkspec.Direction{Limit: 100}, nil), 8, heldFrames{})
		for _, d := range dues {
			l.carry.Judge(d, 0, 100)
		}
		return l
	}
	const now = 1000 * us
	cases := []struct {
		name string
		l    *dirLoop
		want int64
	}{
		{"no window, head due", loop(0, now-10*us, now+10*us), now},
		{"window, head due", loop(200*us, now-10*us, now+10*us), now + 200*us},
		{"window, head due exactly now", loop(200*us, now, now+10*us), now + 200*us},
		{"window, head not yet due", loop(200*us, now+1*us, now+10*us), now},
		{"window, nothing held", loop(200 * us), now},
	}
	for _, c := range cases {
		if got := c.l.cutoff(now); got != c.want {
			t.Errorf("%s: cutoff = now%+d us, want now%+d us", c.name, (got-now)/us, (c.want-now)/us)
		}
	}
}

// TestDepartureWindowValidate: the window is refused when negative or
// above MaxDepartureWindow, naming the field.
func TestDepartureWindowValidate(t *testing.T) {
	base := Config{IfA: "a", IfB: "b", AToB: linkspec.Direction{RateMbit: 10, Limit: 10}, BToA: linkspec.Direction{RateMbit: 10, Limit: 10}}
	for _, w := range []time.Duration{0, 100 * time.Microsecond, MaxDepartureWindow} {
		c := base
		c.DepartureWindow = w
		if err := c.validate(); err != nil {
			t.Errorf("DepartureWindow %v refused: %v", w, err)
		}
	}
	for _, w := range []time.Duration{-time.Microsecond, MaxDepartureWindow + 1} {
		c := base
		c.DepartureWindow = w
		if err := c.validate(); err == nil || !strings.Contains(err.Error(), "DepartureWindow") {
			t.Errorf("DepartureWindow %v: %v; want an error naming the field", w, err)
		}
	}
}
