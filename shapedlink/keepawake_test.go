package shapedlink

import (
	"context"
	"strings"
	"testing"
)

// TestEmulatorKeepAwakeRefused: every backend other than the emulator
// (and auto) refuses Options.EmulatorKeepAwake, naming the option, the
// backend and the one that takes it, before building anything.
func TestEmulatorKeepAwakeRefused(t *testing.T) {
	p, _ := ParseProfile("20:10")
	for _, b := range []Backend{BackendNetem, BackendNone, BackendInProcess} {
		l, err := New(context.Background(), p, Options{Backend: b, EmulatorKeepAwake: true})
		if err == nil {
			l.Close()
			t.Errorf("backend %q accepted EmulatorKeepAwake", b)
			continue
		}
		for _, w := range []string{"EmulatorKeepAwake", `"` + string(b) + `" backend`, `use "emulator"`} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("backend %q: error %q does not say %q", b, err, w)
			}
		}
	}
}
