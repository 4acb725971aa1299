package xwindow

import (
	"strings"
	"testing"
)

// The watch connects to the X server of its own network namespace, by
// the abstract socket, and says what it could not reach.
func TestDialSaysWhatIsWrong(t *testing.T) {
	for _, tc := range []struct{ display, want string }{
		{"localhost:0", "want :N"},
		{":x", "want :N"},
		{":65000.0", "through its abstract socket"},
	} {
		if _, err := Dial(tc.display); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Dial(%q): %v, want an error saying %q", tc.display, err, tc.want)
		}
	}
}
