package shapedlink

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestEmulatorOptionsRefused: every backend other than the emulator (and
// auto) refuses Options.EmulatorKeepAwake and EmulatorDepartureWindow,
// naming the option, the backend and the one that takes it, before
// building anything.
func TestEmulatorOptionsRefused(t *testing.T) {
	p, _ := ParseProfile("20:10")
	for _, o := range []struct {
		name string
		opts Options
	}{
		{"EmulatorKeepAwake", Options{EmulatorKeepAwake: true}},
		{"EmulatorDepartureWindow", Options{EmulatorDepartureWindow: 100 * time.Microsecond}},
	} {
		for _, b := range []Backend{BackendNetem, BackendNone, BackendInProcess} {
			opts := o.opts
			opts.Backend = b
			l, err := New(context.Background(), p, opts)
			if err == nil {
				l.Close()
				t.Errorf("backend %q accepted %s", b, o.name)
				continue
			}
			for _, w := range []string{o.name, `"` + string(b) + `" backend`, `use "emulator"`} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("backend %q, %s: error %q does not say %q", b, o.name, err, w)
				}
			}
		}
	}
}
