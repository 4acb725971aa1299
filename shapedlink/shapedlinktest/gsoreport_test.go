package shapedlinktest

import (
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/shapedlink"
)

// The report names only the ends that sent super-packets, says what the
// backend in use did with them, and is empty when there were none.
func TestGSOReport(t *testing.T) {
	none := []endCount{{shapedlink.ServerEnd, 0, 100}, {shapedlink.ClientEnd, 0, 50}}
	if r := gsoReport(shapedlink.BackendNetem, none, false); r != "" {
		t.Errorf("no super-packets, report %q", r)
	}
	some := []endCount{{shapedlink.ServerEnd, 0, 100}, {shapedlink.ClientEnd, 7, 50}}
	for backend, effect := range map[shapedlink.Backend]string{
		shapedlink.BackendNetem:    "netem queued, delayed and lost each one as a single packet",
		shapedlink.BackendEmulator: "the emulator received each one already cut into wire packets",
		shapedlink.BackendNone:     "nothing shaped them",
	} {
		r := gsoReport(backend, some, false)
		for _, want := range []string{"shapedlinktest: 7 of the 50 packets that left the client end were", effect, "transport.WithoutGSO", "call shapedlinktest.RequireNoGSO"} {
			if !strings.Contains(r, want) {
				t.Errorf("%s: report %q lacks %q", backend, r, want)
			}
		}
		if strings.Contains(r, "server end") {
			t.Errorf("%s: report %q names the server end, which sent none", backend, r)
		}
		if s := gsoReport(backend, some, true); !strings.HasPrefix(s, "shapedlinktest.RequireNoGSO: 7 of the 50") || strings.Contains(s, "ignore") {
			t.Errorf("%s: strict report %q", backend, s)
		}
	}
}
