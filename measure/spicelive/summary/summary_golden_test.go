package summary

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/internal/hostcpu"
	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/spicelive"
	"github.com/shakenfist/quicbench/measure/spicelive/keydraw"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/stats"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/summary.golden.md from the code as it is")

// goldenWorkdir writes runs of two cells, every reading and both arms,
// with live.json records beside the live runs (host CPU, place, censored
// keys, key-to-pixel), a failed run and a live run without live.json.
func goldenWorkdir(t *testing.T, control bool) spicelive.Config {
	t.Helper()
	c := spicelive.Config{Workdir: t.TempDir(), Readings: spicelive.AllReadings(), Arms: []measure.Arm{measure.TCP, measure.QUIC},
		Repeats: 3, Warmup: time.Second, KeyTimeout: 2 * time.Second, Control: control}
	for ci, profile := range []string{"80:10:0", "150:2:0"} {
		cell, _, err := cellOf(c, profile)
		if err != nil {
			t.Fatal(err)
		}
		cell.CC = "reno"
		for ai, arm := range c.Arms {
			for _, rd := range c.Readings {
				base := ms(float64(80 + 70*ci + 10*ai))
				writeRuns(t, c, rd, arm, cell, base, base+ms(3), base+ms(1))
			}
			for rep := 1; rep <= 3; rep++ {
				dir := results.RunDir(c.ReadingDir(spicelive.ReadingLive), cell, string(arm), rep)
				if ci == 1 && ai == 1 && rep == 3 {
					continue // a live run without live.json
				}
				rec := spicelive.LiveRecord{Position: 1 + (ai+rep)%2, HostCPU: &hostcpu.Use{Busy: 0.5 + 0.2*float64(rep), Steal: 0.02 * float64(ai)},
					Analysis: keydraw.Analysis{AllDrawsMin: ms(float64(70 + 70*ci + rep)),
						Samples:  []stats.Sample{{Offset: 2 * time.Second, RTT: ms(float64(75 + 70*ci + rep))}, {Offset: time.Second / 2, RTT: ms(10)}},
						Censored: []stats.Sample{{Offset: 3 * time.Second, RTT: 2 * time.Second}}}}
				if rep == 1 {
					rec.Pixel = &keydraw.PixelAnalysis{Typed: 20, Unanswered: 1, Diff: keydraw.Spread{Min: ms(8), P25: ms(9), P50: ms(10), P75: ms(12), Max: ms(30), N: 15},
						Pixel: keydraw.Spread{P50: ms(95), N: 15}, Input: keydraw.Spread{P50: ms(8), N: 15}, Output: keydraw.Spread{P50: ms(2), N: 15},
						Keys: []keydraw.PixelKey{{At: ms(2000), Pixel: ms(95), Tunnel: ms(8), Draw: ms(85)}}}
				}
				if err := results.WriteJSON(filepath.Join(dir, spicelive.LiveFile), rec); err != nil {
					t.Fatal(err)
				}
				if rep == 2 && ai == 0 {
					var run results.Run
					if err := results.ReadJSON(filepath.Join(dir, results.RunFile), &run); err != nil {
						t.Fatal(err)
					}
					run.Link.Shaper = &shapedlink.ShaperReport{Directions: []shapedlink.ShaperStats{{Direction: "server->client", LateP99Ms: 1.5, LateMaxMs: 4}}}
					if err := results.WriteJSON(filepath.Join(dir, results.RunFile), run); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	}
	return c
}

// TestSummaryGolden: the summary, the control's summary and the samples'
// files of a work directory are byte for byte testdata/summary.golden.md
// (rerun with -update-golden when a change is meant).
func TestSummaryGolden(t *testing.T) {
	var out bytes.Buffer
	for _, control := range []bool{false, true} {
		c := goldenWorkdir(t, control)
		err := Summarise(&out, c)
		out.WriteString("\n-- error: " + errText(err, c.Workdir) + "\n")
		if control {
			continue
		}
		dir := t.TempDir()
		err = WriteSamples(dir, c)
		out.WriteString("\n-- samples error: " + errText(err, c.Workdir) + "\n")
		for _, name := range []string{RunsCSV, KeysCSV} {
			b, _ := os.ReadFile(filepath.Join(dir, name))
			out.WriteString("-- " + name + "\n")
			out.Write(b)
		}
	}
	path := filepath.Join("testdata", "summary.golden.md")
	if *updateGolden {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestSummaryGolden -update-golden to create it)", err)
	}
	if out.String() != string(want) {
		t.Errorf("the output differs from %s:\n%s", path, out.String())
	}
}

// errText is err's text with the work directory named WORKDIR.
func errText(err error, workdir string) string {
	if err == nil {
		return "none"
	}
	return strings.ReplaceAll(err.Error(), workdir, "WORKDIR")
}
