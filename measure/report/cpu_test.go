package report

import (
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
)

func TestCPUSummary(t *testing.T) {
	mk := func(srvCPU, cliCPU time.Duration, bytes int64, rss int64) results.Run {
		return results.Run{
			Arm: "quic", BulkBytesTotal: bytes,
			ServerUsage: &results.Usage{User: srvCPU / 2, System: srvCPU / 2, MaxRSSKiB: rss},
			ClientUsage: &results.Usage{User: cliCPU, MaxRSSKiB: rss / 2},
		}
	}
	rs := []results.Run{
		mk(100*time.Millisecond, 50*time.Millisecond, 10e6, 20480), // 10 and 5 ms/MB
		mk(300*time.Millisecond, 90*time.Millisecond, 10e6, 40960), // 30 and 9
		mk(200*time.Millisecond, 70*time.Millisecond, 10e6, 10240), // 20 and 7
		{Arm: "quic", Failed: "x", ServerUsage: &results.Usage{User: time.Hour}, ClientUsage: &results.Usage{}, BulkBytesTotal: 1},
		{Arm: "quic", BulkBytesTotal: 1e6}, // no usage recorded
	}
	c := cpuSummary(rs)
	if c == nil {
		t.Fatal("no summary")
	}
	if c.Runs != 3 || c.ServerMsPerMB.Median != 20 || c.ServerMsPerMB.Min != 10 || c.ServerMsPerMB.Max != 30 {
		t.Errorf("server: %+v runs %d", c.ServerMsPerMB, c.Runs)
	}
	if c.ClientMsPerMB.Median != 7 || c.ServerMaxRSSMiB != 40 || c.ClientMaxRSSMiB != 20 {
		t.Errorf("client %+v rss %v/%v", c.ClientMsPerMB, c.ServerMaxRSSMiB, c.ClientMaxRSSMiB)
	}
	if cpuSummary(rs[3:]) != nil {
		t.Error("summary from runs without usable records")
	}

}
