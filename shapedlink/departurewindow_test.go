package shapedlink

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestEmulatorDepartureWindowRange: a window outside 0 to 1 ms is refused
// before anything is built, naming the option and the value.
func TestEmulatorDepartureWindowRange(t *testing.T) {
	p, _ := ParseProfile("20:10")
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
