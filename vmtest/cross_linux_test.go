package vmtest

import (
	"testing"
	"time"

	_ "github.com/shakenfist/quicbench/shapedlink/quiccross"
)

// TestCrossTrafficBothBackends: a cubic and a QUIC cross flow run through
// netem as through the emulator, each carrying traffic and together no
// more than the link's 10 Mbit/s. (How much of it they fill depends on
// the VM's speed, so only that each ran is asked.)
func TestCrossTrafficBothBackends(t *testing.T) {
	for _, b := range bothBackends {
		t.Run(string(b), func(t *testing.T) {
			l := newLinkBackend(t, "20:10,down.cross=1xcubic+1xquic", b)
			start := time.Now()
			time.Sleep(3 * time.Second)
			if err := l.Err(); err != nil {
				t.Fatal(err)
			}
			rs := l.Instruments().CrossFlows()
			if len(rs) != 2 {
				t.Fatalf("%d cross flows, want 2", len(rs))
			}
			var sum float64
			for _, r := range rs {
				g := r.GoodputMbit(start.Add(time.Second), time.Now())
				t.Logf("%s: %.2f Mbit/s, cc %q, %d of %d packets sent again", r.Kind, g, r.CC, r.Retransmits, r.SentPackets)
				if g < 0.5 {
					t.Errorf("cross flow %s carried %.2f Mbit/s", r.Kind, g)
				}
				sum += g
			}
			if sum > 10.5 {
				t.Errorf("the cross flows carried %.2f Mbit/s together on a 10 Mbit/s link", sum)
			}
		})
	}
}
