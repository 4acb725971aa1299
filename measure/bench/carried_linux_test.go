package bench

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/gsocheck"
	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/shapedlink/shapedlinktest"
	"github.com/shakenfist/quicbench/transport"
)

// The carried arms in a matrix: quic-carrier's run.json records it as a
// QUIC arm carried by quic-go, offload off by the egress counters; quinn's
// (where the program can be had) records each end's packets sent and RTT
// at exit.
func TestCarriedArmsRecord(t *testing.T) {
	shapedlinktest.Need(t)
	arms := []measure.Arm{measure.Arm("quic-carrier")}
	if err := measure.Quinn.Available(t.Context()); err != nil {
		t.Logf("quinn left out: %v", err)
	} else {
		arms = append(arms, measure.Quinn)
	}
	m := tinyMatrix(t, arms...)
	if err := Run(context.Background(), m, Options{}); err != nil {
		t.Fatal(err)
	}
	runs, err := results.Load(m.Workdir)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != len(arms) {
		t.Fatalf("%d runs recorded, want %d", len(runs), len(arms))
	}
	for _, r := range runs {
		if r.Failed != "" {
			t.Errorf("%s failed: %s", r.Arm, r.Failed)
			continue
		}
		if !r.QUIC || r.GSOCounters == nil || r.GSOCounters.Verdict != gsocheck.Off {
			t.Errorf("%s: QUIC %v, egress counters %+v: want a QUIC arm with offload off", r.Arm, r.QUIC, r.GSOCounters)
		}
		for role, raw := range map[string]json.RawMessage{"server": r.Server, "client": r.Client} {
			var st transport.State
			if err := json.Unmarshal(raw, &st); err != nil {
				t.Fatalf("%s %s: %v", r.Arm, role, err)
			}
			if string(st.Arm) != r.Arm || len(st.QUIC) != 1 {
				t.Fatalf("%s %s: arm %q with %d QUIC connections", r.Arm, role, st.Arm, len(st.QUIC))
			}
			q := st.QUIC[0]
			if q.GSO || q.ConfiguredPacketSize != 1400 || q.QUICVersion == "" {
				t.Errorf("%s %s: GSO %v, datagram %d, version %q", r.Arm, role, q.GSO, q.ConfiguredPacketSize, q.QUICVersion)
			}
			if q.Stats.PacketsSent == 0 || q.Stats.SmoothedRTT < 20*time.Millisecond {
				t.Errorf("%s %s: %d packets sent, RTT %v recorded", r.Arm, role, q.Stats.PacketsSent, q.Stats.SmoothedRTT)
			}
		}
	}
}
