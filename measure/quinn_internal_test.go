package measure

import (
	"context"
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
