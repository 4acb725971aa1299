package quicreno

import (
	"strings"
	"testing"
)

func TestValidateSaysWhatIsWrong(t *testing.T) {
	if err := Defaults().Validate(); err != nil {
		t.Fatalf("defaults refused: %v", err)
	}
	p := Defaults()
	p.InitialWindow, p.BetaPercent, p.MinWindow = 0, 100, 0
	err := p.Validate()
	if err == nil {
		t.Fatal("accepted a zero window, beta 100% and a zero floor")
	}
	for _, want := range []string{"initial window 0", "beta 100%", "minimum window 0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestNeeded(t *testing.T) {
	if Needed([]string{"reno", "cubic"}) || !Needed([]string{"reno", Name}) {
		t.Fatal("Needed does not find the controller's name")
	}
}
