package summary

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/neighbours"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/spicelive"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
	"github.com/shakenfist/quicbench/transport"
)

// TestNeighbours: the summary has a neighbours section for a reading whose
// runs had cross flows, and none for the others; a runs.csv with the
// neighbours' columns after the others still reads.
func TestNeighbours(t *testing.T) {
	c := spicelive.Config{Workdir: t.TempDir(), Readings: []string{spicelive.ReadingLive, spicelive.ReadingSynthetic},
		Arms: []measure.Arm{measure.TCP, measure.QUIC}, Repeats: 1, Warmup: time.Second}
	cell := results.Cell{Profile: "80:10,down.cross=1xcubic", RTTms: 80, RateMbit: 10, CC: "reno"}
	for _, rd := range c.Readings {
		for _, arm := range c.Arms {
			r := fakeRun(cell, arm, 1, 80*time.Millisecond)
			if rd == spicelive.ReadingSynthetic {
				r.SamplesStart = r.Started
				bins := make([]int64, 120)
				for i := range bins {
					bins[i] = 50_000 // 4 Mbit/s
				}
				r.ThroughputMbit = 4
				r.Link.Cross = []shapedlink.CrossReport{{Dir: "down", Kind: "cubic", Started: r.Started, BinMs: 100, Bins: bins, SentPackets: 100, Retransmits: 1}}
			}
			if err := results.WriteJSON(filepath.Join(results.RunDir(c.ReadingDir(rd), cell, string(arm), 1), results.RunFile), r); err != nil {
				t.Fatal(err)
			}
		}
	}
	var out bytes.Buffer
	if err := Summarise(&out, c); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !strings.Contains(s, "## Neighbours, synthetic reading") || strings.Contains(s, "## Neighbours, live reading") {
		t.Errorf("neighbours sections wrong:\n%s", s)
	}
	if !strings.Contains(s, "| tcp | 1 | 4.00 | 4.00 | 1.00 | tcp on reno, this cell | 1.000 |") {
		t.Errorf("neighbours row not found:\n%s", s)
	}

	// A row with the neighbours' columns after every other reads.
	head := strings.Join(append(append([]string{}, runsHeader...), neighbourHeader...), ",")
	row := "c,tcp,1,false" + strings.Repeat(",", len(runsHeader)-3) + "4.0000,1.0000,,1.0000,"
	rows, err := readRuns(strings.NewReader(head + "\n" + row + "\n"))
	if err != nil || len(rows) != 1 || rows[0].Fields["cross_mbit"] != "4.0000" || rows[0].Picture != nil {
		t.Errorf("runs.csv with neighbours' columns: %+v, %v", rows, err)
	}
	r := liveRun{Run: fakeRun(cell, measure.TCP, 1, 0), Err: os.ErrNotExist}
	if hasCross([]liveRun{r}) {
		t.Error("a run without cross flows counted as having them")
	}
	r.Link.Cross = []shapedlink.CrossReport{{Dir: "down", Kind: "cubic", BinMs: 100}}
	cells := neighbourCells(r)
	if len(cells) != len(neighbourHeader) || !strings.Contains(cells[4], "samples_start") {
		t.Errorf("a live run without its files: %q", cells)
	}
}

// TestLiveWindow: a live run's window is its typing period after the
// warm-up, placed by the client trace's start, and its session's
// retransmissions are its server's state in live.json.
func TestLiveWindow(t *testing.T) {
	dir := t.TempDir()
	traceStart := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	f, err := os.Create(filepath.Join(dir, spicelive.ClientTrace))
	if err != nil {
		t.Fatal(err)
	}
	tw, err := spicetrace.NewWriter(f, spicetrace.Header{Side: spicetrace.SideClient, Started: traceStart})
	if err == nil {
		err = tw.Flush()
	}
	if err := errors.Join(err, f.Close()); err != nil {
		t.Fatal(err)
	}
	state := &transport.State{QUIC: []transport.QUICConnState{{Stats: transport.QUICStats{PacketsSent: 200, PacketsLost: 5}}}}
	rec := spicelive.LiveRecord{Server: &spicelive.ServerResult{State: state},
		Client: &spicelive.ClientResult{TypingStart: 2 * time.Second, TypingEnd: 8 * time.Second}}
	cell := results.Cell{Profile: "80:10,down.cross=1xcubic", RTTms: 80, RateMbit: 10, CC: "reno"}
	r := fakeRun(cell, measure.QUIC, 1, 80*time.Millisecond)
	r.ThroughputMbit = 4
	// Bins of 4 Mbit/s inside the typing after the 1 s warm-up (3 s to 8 s
	// of the trace), 40 Mbit/s outside it.
	bins := make([]int64, 100)
	for i := range bins {
		bins[i] = 500_000
		if i >= 30 && i < 80 {
			bins[i] = 50_000
		}
	}
	r.Link.Cross = []shapedlink.CrossReport{{Dir: "down", Kind: "cubic", Started: traceStart, BinMs: 100, Bins: bins, SentPackets: 10, Retransmits: 1}}
	fig, err := neighbours.Measure(forNeighbours(liveRun{Run: r, Dir: dir, Rec: rec}))
	if err != nil || fig.Unmeasured != "" {
		t.Fatalf("%v %q", err, fig.Unmeasured)
	}
	if math.Abs(fig.CrossMbit-4) > 1e-9 || math.Abs(fig.SessionRetransmitPct-2.5) > 1e-9 {
		t.Errorf("cross %v Mbit/s (want 4), session retransmissions %v%% (want 2.5)", fig.CrossMbit, fig.SessionRetransmitPct)
	}
}
