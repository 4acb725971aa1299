package shapedlink

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestEmulatorDepartureWindowRefused: a window outside 0 to 1 ms, or on a
// backend other than the emulator (and auto), is refused before anything
// is built, naming the option.
func TestEmulatorDepartureWindowRefused(t *testing.T) {
	p, _ := ParseProfile("20:10")
	for _, b := range []Backend{BackendNetem, BackendNone, BackendInProcess} {
		l, err := New(context.Background(), p, Options{Backend: b, EmulatorDepartureWindow: 100 * time.Microsecond})
		if err == nil {
			l.Close()
			t.Errorf("backend %q accepted EmulatorDepartureWindow", b)
			continue
		}
		for _, w := range []string{"EmulatorDepartureWindow", `"` + string(b) + `" backend`, `use "emulator"`} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("backend %q: error %q does not say %q", b, err, w)
			}
		}
	}
	for _, w := range []time.Duration{-time.Microsecond, 2 * time.Millisecond} {
		l, err := New(context.Background(), p, Options{Backend: BackendEmulator, EmulatorDepartureWindow: w})
		if err == nil {
			l.Close()
			t.Errorf("EmulatorDepartureWindow %v accepted", w)
			continue
		}
		if !strings.Contains(err.Error(), "EmulatorDepartureWindow is "+w.String()) {
			t.Errorf("EmulatorDepartureWindow %v: error %q does not name the option and the value", w, err)
		}
	}
}
