package summary

import (
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/internal/hostcpu"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/spicelive"
	"github.com/shakenfist/quicbench/measure/spicelive/keydraw"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/stats"
)

// A run is flagged for a late emulator or a saturated or stolen host, and
// not for one just under each threshold; its runs.csv columns say when
// and how it ran.
func TestRunRecordFlagsAndColumns(t *testing.T) {
	run := results.Run{Started: time.Date(2026, 12, 7, 5, 0, 0, 0, time.UTC), Link: results.Link{Shaper: &shapedlink.ShaperReport{Directions: []shapedlink.ShaperStats{
		{Direction: "server->client", LateP99Ms: 0.99, LateMaxMs: 3},
		{Direction: "client->server", LateP99Ms: 0.1, LateMaxMs: 0.5},
	}}}}
	rec := &spicelive.LiveRecord{Position: 3, HostCPU: &hostcpu.Use{Busy: 0.94, Steal: 0.049},
		Analysis: keydraw.Analysis{Censored: []stats.Sample{{RTT: 20 * time.Second}}}}
	if f := runFlags(run, rec); f != "" {
		t.Errorf("a run under every threshold flagged: %s", f)
	}
	if got, want := strings.Join(runRecordColumns(run, rec), ","), "2026-12-07T05:00:00Z,3,0.990,3.000,0.100,0.500,0.940,0.049,1"; got != want {
		t.Errorf("columns %s, want %s", got, want)
	}
	if len(recordHeader) != len(runRecordColumns(run, rec)) {
		t.Errorf("%d columns for %d names", len(runRecordColumns(run, rec)), len(recordHeader))
	}
	run.Link.Shaper.Directions[1].LateP99Ms = 1.5
	rec.HostCPU = &hostcpu.Use{Busy: 0.96, Steal: 0.06}
	f := runFlags(run, rec)
	for _, want := range []string{"late by 1.50 ms at p99 (client->server)", "96% busy", "6% of CPU time stolen"} {
		if !strings.Contains(f, want) {
			t.Errorf("flag %q lacks %q", f, want)
		}
	}
}
