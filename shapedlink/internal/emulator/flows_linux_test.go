package emulator

import (
	"testing"

	"github.com/shakenfist/quicbench/shapedlink/internal/aqm"
)

// TestFullestFlows: the published flow queues are the fullest by bytes,
// fullest first, at most n of them.
func TestFullestFlows(t *testing.T) {
	fl := []aqm.FlowBacklog{{Index: 1, Packets: 2, Bytes: 200}, {Index: 7, Packets: 9, Bytes: 9000}, {Index: 3, Packets: 1, Bytes: 60}, {Index: 4, Packets: 3, Bytes: 4000}}
	got := fullestFlows(fl, 2)
	if len(got) != 2 || got[0].Index != 7 || got[1].Index != 4 {
		t.Errorf("fullestFlows(.., 2) = %+v, want flows 7 then 4", got)
	}
	if got := fullestFlows(fl[:1], 8); len(got) != 1 {
		t.Errorf("fullestFlows of one flow = %+v", got)
	}
}
