package summary

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/spicelive"
	"github.com/shakenfist/quicbench/measure/spicelive/keydraw"
)

// With Config.Pixel off nothing changes: the settings, the live record and
// the summary are as they were.
func TestPixelOffChangesNothing(t *testing.T) {
	b, _ := json.Marshal(spicelive.Config{Profiles: []string{"80:10"}})
	if strings.Contains(string(b), "pixel") {
		t.Errorf("settings without Pixel: %s", b)
	}
	b, _ = json.Marshal(spicelive.LiveRecord{})
	if strings.Contains(string(b), "pixel") {
		t.Errorf("a live record without Pixel: %s", b)
	}
	c := spicelive.Config{Workdir: t.TempDir(), Readings: []string{spicelive.ReadingLive}, Arms: []measure.Arm{measure.TCP}, Repeats: 2, Warmup: time.Second}
	cell, _, _ := cellOf(c, "80:10:1")
	cell.CC = "reno"
	writeRuns(t, c, spicelive.ReadingLive, measure.TCP, cell, ms(80), ms(81))
	var out bytes.Buffer
	if err := Summarise(&out, c); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "pixel") {
		t.Errorf("a summary without key-to-pixel mentions pixels:\n%s", out.String())
	}
	// A run with it gets the table.
	p := keydraw.PixelAnalysis{Typed: 20, Unanswered: 1, Diff: keydraw.Spread{Min: ms(8), P25: ms(9), P50: ms(10), P75: ms(12), Max: ms(30), N: 15},
		Pixel: keydraw.Spread{P50: ms(95), N: 15}, Input: keydraw.Spread{P50: ms(8), N: 15}, Output: keydraw.Spread{P50: ms(2), N: 15},
		Keys: []keydraw.PixelKey{{At: ms(2000), Pixel: ms(95), Tunnel: ms(8), Draw: ms(85)}}}
	dir := results.RunDir(c.ReadingDir(spicelive.ReadingLive), cell, "tcp", 1)
	if err := results.WriteJSON(filepath.Join(dir, spicelive.LiveFile), spicelive.LiveRecord{Pixel: &p}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := Summarise(&out, c); err != nil {
		t.Fatal(err)
	}
	if want := "| 80 ms / 10 Mbit, 1% loss | tcp | 1 | 20 | 15 | 1 | 0 | 85.0 | 95.0 | 10.0 | 9.0-12.0 | 8.0-30.0 | 8.0 | 2.0 | 0 |"; !strings.Contains(out.String(), want) {
		t.Errorf("the key-to-pixel table lacks %q:\n%s", want, out.String())
	}
}

// The summary says how a run with a workload was read, and counts its
// Returns and tail keys as not timed; a run without one reads as before.
func TestPixelTableOfGlyphRuns(t *testing.T) {
	c := spicelive.Config{Workdir: t.TempDir(), Readings: []string{spicelive.ReadingLive}, Arms: []measure.Arm{measure.TCP}, Repeats: 1, Warmup: time.Second}
	cell, _, _ := cellOf(c, "80:10:1")
	cell.CC = "reno"
	writeRuns(t, c, spicelive.ReadingLive, measure.TCP, cell, ms(80))
	p := keydraw.PixelAnalysis{Typed: 20, Unanswered: 1, Untimed: 1, Tail: 4, Diff: keydraw.Spread{P50: ms(10), N: 14}, Pixel: keydraw.Spread{P50: ms(95), N: 14},
		Keys: []keydraw.PixelKey{{At: ms(2000), Pixel: ms(95), Tunnel: ms(8), Draw: ms(85)}}}
	summary := func() string {
		dir := results.RunDir(c.ReadingDir(spicelive.ReadingLive), cell, "tcp", 1)
		if err := results.WriteJSON(filepath.Join(dir, spicelive.LiveFile), spicelive.LiveRecord{Pixel: &p}); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := Summarise(&out, c); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	const told = "told apart by their glyphs"
	if s := summary(); strings.Contains(s, told) {
		t.Errorf("a run read the old way is said to be read by glyph:\n%s", s)
	}
	p.Method = keydraw.MethodGlyph
	s := summary()
	if !strings.Contains(s, told) || !strings.Contains(s, "| 20 | 14 | 1 | 5 |") {
		t.Errorf("a run read by glyph: the summary lacks %q or its 5 keys not timed:\n%s", told, s)
	}
}
