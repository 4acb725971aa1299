package simcheck

import (
	"context"
	"testing"

	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
)

func TestMain(m *testing.M) { shapedlinktest.Main(m) }

// TestLossPatternAsTheEmulator: with the same seed the in-process link
// loses exactly the datagrams the emulator loses, for independent,
// Gilbert-Elliott and jittered loss: the model is the same code, its
// draws depend only on the datagrams' order, and nothing else crosses
// the emulator's link.
func TestLossPatternAsTheEmulator(t *testing.T) {
	shapedlinktest.Need(t)
	for _, profile := range []string{"80:10:2", "80:10,loss=ge:1/20", "80:10:2,jitter=5/normal"} {
		p, err := shapedlink.ParseProfile(profile)
		if err != nil {
			t.Fatal(err)
		}
		var lost [2][]bool
		for i, b := range []shapedlink.Backend{shapedlink.BackendEmulator, shapedlink.BackendInProcess} {
			link, err := shapedlink.New(context.Background(), p, shapedlink.Options{Backend: b, Seed: 4})
			if err != nil {
				t.Fatal(err)
			}
			lost[i], err = lossPattern(context.Background(), link, small)
			_ = link.Close()
			if err != nil {
				t.Fatal(err)
			}
		}
		if i := firstDifference(lost[0], lost[1]); i >= 0 || count(lost[0]) == 0 {
			t.Errorf("%s: the emulator lost %d, the in-process link %d, first difference at #%d", profile, count(lost[0]), count(lost[1]), i)
		}
	}
}
