package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/measure/report"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/stats"
)

// The CPU section shows each arm's cost, and is left out when no arm has one.
func TestCPUSection(t *testing.T) {
	c := &report.CPUSummary{Runs: 3, ServerMsPerMB: stats.Summary{Median: 20, Min: 10, Max: 30}, ClientMsPerMB: stats.Summary{Median: 7, Min: 5, Max: 9},
		ServerMaxRSSMiB: 40, ClientMaxRSSMiB: 20}
	rep := &report.Report{Cells: []report.CellReport{{Cell: results.Cell{RTTms: 80, RateMbit: 10, CC: "reno"}, Arms: []report.ArmReport{{Arm: "quic", CPU: c}}}}}
	var b bytes.Buffer
	mdCPU(rep, &md{w: &b})
	if !strings.Contains(b.String(), "| 80 ms / 10 Mbit | 0% | reno | quic | 20.00 (10.00-30.00) | 7.00 (5.00-9.00) | 40.0 | 20.0 | 3 |") {
		t.Errorf("markdown:\n%s", b.String())
	}
	b.Reset()
	mdCPU(&report.Report{Cells: []report.CellReport{{Arms: []report.ArmReport{{Arm: "tcp"}}}}}, &md{w: &b})
	if b.Len() != 0 {
		t.Errorf("a CPU section with nothing to show:\n%s", b.String())
	}
}
