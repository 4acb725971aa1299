package summary

import (
	"testing"
	"time"

	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

func TestDisplayRate(t *testing.T) {
	disp := func(t time.Duration, size int) spicetrace.Record {
		return spicetrace.Record{T: t, Dir: spicetrace.ServerToClient, Channel: 2, ChannelType: "display", Stage: spicetrace.StageData, Size: size}
	}
	client := &spicetrace.Trace{Records: []spicetrace.Record{
		{T: ms(100), Dir: spicetrace.ClientToServer, Channel: 1, ChannelType: "inputs", Stage: spicetrace.StageData, Size: 8},
		disp(ms(400), 1000), disp(ms(500), 60),
	}}
	// From 0 to 1 s in 250 ms bins: 1000 bytes in [250, 500), 60 in [500, 750).
	got := displayRate(client, 0, time.Second, 250*time.Millisecond)
	want := []float64{0, 1000 * 8 / 0.25 / 1e6, 60 * 8 / 0.25 / 1e6, 0}
	if len(got) != len(want) {
		t.Fatalf("displayRate = %v, want %v", got, want)
	}
	for i := range want {
		if d := got[i] - want[i]; d > 1e-9 || d < -1e-9 {
			t.Errorf("bin %d: %v, want %v", i, got[i], want[i])
		}
	}
}
