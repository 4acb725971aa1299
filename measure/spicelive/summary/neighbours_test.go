package summary

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/spicelive"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/transport"
)

// TestNeighbours: the summary has a neighbours section for a reading whose
// runs had cross flows, and none for the others; a runs.csv with the
// neighbours' columns after the others still reads.
func TestNeighbours(t *testing.T) {
	c := spicelive.Config{Workdir: t.TempDir(), Readings: []string{spicelive.ReadingLive, spicelive.ReadingSynthetic},
		Arms: []transport.Arm{transport.ArmTCP, transport.ArmQUIC}, Repeats: 1, Warmup: time.Second}
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
	r := fakeRun(cell, transport.ArmTCP, 1, 0)
	if hasCross([]results.Run{r}) {
		t.Error("a run without cross flows counted as having them")
	}
	r.Link.Cross = []shapedlink.CrossReport{{Dir: "down", Kind: "cubic", BinMs: 100}}
	cells := neighbourCells(c, r)
	if len(cells) != len(neighbourHeader) || !strings.Contains(cells[4], "samples_start") {
		t.Errorf("a live run without its files: %q", cells)
	}
}
