package plan

import (
	"testing"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/shapedlink"
)

// TestPlanOwnLoss: a profile with a loss model of its own runs once, as
// it is, whatever the loss levels, in a cell named by its whole profile
// with its mean loss; a profile without one runs at every level with the
// level's loss, as before.
func TestPlanOwnLoss(t *testing.T) {
	var profiles []shapedlink.Profile
	for _, s := range []string{"80:10", "80:10,loss=ge:0.33667/33.333", "80:10,loss=state:2/50", "80:10,down.loss=2,up.loss=1/25"} {
		p, err := shapedlink.ParseProfile(s)
		if err != nil {
			t.Fatal(err)
		}
		profiles = append(profiles, p)
	}
	m := &Matrix{Profiles: profiles, Losses: []float64{0, 1}, CCs: []string{MatchedCC},
		Arms: []measure.Arm{"tcp", "quic"}, Repeats: 2}
	type cell struct {
		dir, profile string
		loss         float64
	}
	got := map[cell]int{}
	for _, rc := range m.Plan() {
		if rc.Cell.Profile != rc.Profile.WithLoss(0).String() && rc.Cell.Profile != rc.Profile.String() {
			t.Errorf("cell profile %q for a run of %q", rc.Cell.Profile, rc.Profile)
		}
		got[cell{rc.Cell.Dir(), rc.Profile.String(), rc.Cell.LossPct}]++
	}
	want := map[cell]int{
		{"80ms-10mbit_loss0_reno", "80:10", 0}:                                                       4,
		{"80ms-10mbit_loss1_reno", "80:10:1", 1}:                                                     4,
		{"80ms-10mbit_loss1_reno_loss-ge-0.33667-33.333", "80:10,loss=ge:0.33667/33.333", 1}:         4,
		{"80ms-10mbit_loss3.846_reno_loss-state-2-50", "80:10,loss=state:2/50", 3.846}:               4,
		{"80ms-10mbit_loss1.5_reno_down.loss-2_up.loss-1-25", "80:10,down.loss=2,up.loss=1/25", 1.5}: 4,
	}
	if len(got) != len(want) {
		t.Errorf("planned cells %v, want %v", got, want)
	}
	for c, n := range want {
		if got[c] != n {
			t.Errorf("cell %+v: %d runs, want %d (planned %v)", c, got[c], n, got)
		}
	}
}
