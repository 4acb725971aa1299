package shapedlink

import (
	"strings"
	"testing"
)

// TestParseOffloadMode: the two names read as the two modes and print
// back as themselves (the zero mode as "wire"); anything else, the empty
// string included, is refused with both names in the error.
func TestParseOffloadMode(t *testing.T) {
	for name, want := range map[string]OffloadMode{"wire": OffloadWire, "keep": OffloadKeep} {
		m, err := ParseOffloadMode(name)
		if err != nil || m != want {
			t.Errorf("ParseOffloadMode(%q) = %q, %v; want %q", name, m, err, want)
		}
		if m.String() != name {
			t.Errorf("%q.String() = %q, want %q", string(m), m.String(), name)
		}
	}
	for _, bad := range []string{"", "on", "Keep", "gso"} {
		_, err := ParseOffloadMode(bad)
		if err == nil || !strings.Contains(err.Error(), "use wire") || !strings.Contains(err.Error(), "or keep") {
			t.Errorf("ParseOffloadMode(%q): %v, want an error naming wire and keep", bad, err)
		}
	}
}
