package measure

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/transport"
	"github.com/shakenfist/quicbench/transport/quinncarrier"
)

// Without the carrier program the quinn arms still parse and prepare, and
// Listen and Dial fail saying where to read how to build it.
func TestQuinnUnavailable(t *testing.T) {
	defer func(f func(context.Context) (string, error)) { carrierBinary = f }(carrierBinary)
	carrierBinary = func(context.Context) (string, error) {
		return "", fmt.Errorf("%w: cargo is not installed", quinncarrier.ErrUnavailable)
	}
	for _, name := range []string{"quinn", "quinn-priority"} {
		arm, err := Lookup(name)
		if err != nil {
			t.Fatalf("Lookup(%q): %v", name, err)
		}
		if !arm.QUIC() {
			t.Errorf("%s: QUIC() is false", name)
		}
		so, co, err := PrepareOptions(arm, spicelike.Defaults(), transport.Options{})
		if err != nil {
			t.Fatalf("%s: PrepareOptions: %v", name, err)
		}
		ln, err := arm.Listen(t.Context(), "127.0.0.1:0", so)
		if err == nil {
			ln.Close()
			t.Fatalf("%s: Listen worked without the program", name)
		}
		_, derr := arm.Dial(t.Context(), "127.0.0.1:9", co)
		for _, e := range []error{err, derr} {
			if e == nil || !strings.Contains(e.Error(), "docs/quinn.md") || !strings.Contains(e.Error(), "cargo is not installed") {
				t.Errorf("%s: the error %v does not name docs/quinn.md and the cause", name, e)
			}
		}
	}
}

// The run's controller names map onto quinn's; an unknown one is refused.
func TestQuinnControllers(t *testing.T) {
	for cc, want := range map[string]string{"": "cubic", "reno": "newreno", "cubic": "cubic", "bbr": "bbr"} {
		if got := quinnCC[cc]; got != want {
			t.Errorf("controller %q runs quinn's %q, want %q", cc, got, want)
		}
	}
	if _, _, err := PrepareOptions(Quinn, spicelike.Defaults(), transport.Options{CongestionControl: "vegas"}); err == nil || !strings.Contains(err.Error(), "vegas") {
		t.Errorf("PrepareOptions with vegas: %v", err)
	}
}

// quinn-<controller> names an arm pinned to one of quinn's controllers,
// whatever the cell's; any other quinn- name is refused, by Lookup and by
// ParseCarrierArm, which also refuses the arms whose controller or
// priority a carrier cannot have.
func TestQuinnPinnedArms(t *testing.T) {
	for _, c := range []struct{ name, controller string }{
		{"quinn-cubic", "cubic"}, {"quinn-newreno", "newreno"}, {"quinn-reno", "newreno"}, {"quinn-bbr", "bbr"},
	} {
		arm, err := Lookup(c.name)
		if err != nil {
			t.Fatalf("Lookup(%s): %v", c.name, err)
		}
		if !arm.QUIC() || arm.CellCC() {
			t.Errorf("%s: QUIC %v, CellCC %v; want a QUIC arm with its own controller", c.name, arm.QUIC(), arm.CellCC())
		}
		if _, ok := arm.PinnedCC(); ok {
			t.Errorf("%s: PinnedCC says it pins a kernel TCP controller", c.name)
		}
		so, co, err := PrepareOptions(arm, spicelike.Defaults(), transport.Options{CongestionControl: "vegas"})
		if err != nil || so.CongestionControl != co.CongestionControl || len(so.Certificate.KeyPEM) == 0 || len(co.Certificate.KeyPEM) != 0 {
			t.Fatalf("%s: PrepareOptions over the cell's vegas: %+v, %+v, %v", c.name, so, co, err)
		}
		q, _ := arm.transport()
		for _, o := range []transport.Options{so, co, {}, {CongestionControl: "bbr"}, {CongestionControl: "cubic"}} {
			if got, err := q.(quinnArm).controller(o); err != nil || got != c.controller {
				t.Errorf("%s with the cell's %q runs quinn's %q (%v), want %q", c.name, o.CongestionControl, got, err, c.controller)
			}
		}
		if a, err := ParseCarrierArm(c.name); err != nil || string(a) != c.name {
			t.Errorf("ParseCarrierArm(%s) = %q, %v", c.name, a, err)
		}
	}
	for name, want := range map[string]string{
		"quinn-foo": "quinn's controllers are quinn-cubic", "quinn-": "quinn's controllers are quinn-cubic",
		"quinn-Cubic": "quinn's controllers are quinn-cubic",
	} {
		if _, err := Lookup(name); err == nil || !errors.Is(err, ErrUnknownArm) || !strings.Contains(err.Error(), want) {
			t.Errorf("Lookup(%q): %v, want an unknown arm saying %q", name, err, want)
		}
		if _, err := ParseCarrierArm(name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseCarrierArm(%q): %v, want %q", name, err, want)
		}
	}
	for name, want := range map[string]string{
		"quinn": "name quinn's controller, quinn-cubic", "quinn-priority": "no channel to prioritise",
		"sctp": "or quinn-<controller>",
	} {
		if _, err := ParseCarrierArm(name); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseCarrierArm(%q): %v, want an error saying %q", name, err, want)
		}
	}
}
