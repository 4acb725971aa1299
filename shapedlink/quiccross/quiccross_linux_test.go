package quiccross_test

import (
	"testing"
	"time"

	_ "github.com/shakenfist/quicbench/shapedlink/quiccross"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
)

// TestQUICCrossFlowRuns checks that a QUIC cross flow fills most of an
// otherwise idle link and says what it sent.
func TestQUICCrossFlowRuns(t *testing.T) {
	l := shapedlinktest.New(t, "20:10,down.cross=1xquic")
	start := time.Now()
	time.Sleep(3 * time.Second)
	if err := l.Err(); err != nil {
		t.Fatal(err)
	}
	rs := l.Instruments().CrossFlows()
	if len(rs) != 1 {
		t.Fatalf("%d cross flows, want 1", len(rs))
	}
	r := rs[0]
	got := r.GoodputMbit(start.Add(time.Second), time.Now())
	t.Logf("quic cross flow: %.2f Mbit/s, %d of %d packets lost, cc %q", got, r.Retransmits, r.SentPackets, r.CC)
	if r.Kind != "quic" || r.CC == "" || r.SentPackets == 0 {
		t.Errorf("report %+v", r)
	}
	if got < 5 {
		t.Errorf("the QUIC cross flow carried %.2f Mbit/s of an idle 10 Mbit/s link", got)
	}
}
