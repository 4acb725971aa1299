package plan

import (
	"errors"
	"testing"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike"
)

// A matrix takes any registered arm, tcp-mux and an importer's included,
// and refuses a name no arm has with measure's error.
func TestValidateTakesRegisteredArms(t *testing.T) {
	p, err := shapedlink.ParseProfile("20:10")
	if err != nil {
		t.Fatal(err)
	}
	m := &Matrix{
		Profiles: []shapedlink.Profile{p}, Losses: []float64{1}, CCs: []string{MatchedCC},
		Arms: []measure.Arm{"tcp", "tcp-mux"}, Repeats: 1, Workload: spicelike.Defaults(), Workdir: t.TempDir(),
	}
	if err := m.Validate(); err != nil {
		t.Errorf("tcp and tcp-mux: %v", err)
	}
	m.Arms = []measure.Arm{"tcp", "quinn-cubic", "quinn-bbr"}
	if err := m.Validate(); err != nil {
		t.Errorf("quinn-cubic and quinn-bbr beside a reno cell: %v", err)
	}
	for _, a := range []measure.Arm{"sctp", "quinn-foo"} {
		m.Arms = []measure.Arm{a}
		if err := m.Validate(); !errors.Is(err, measure.ErrUnknownArm) {
			t.Errorf("%s: %v, want measure.ErrUnknownArm", a, err)
		}
	}
}
