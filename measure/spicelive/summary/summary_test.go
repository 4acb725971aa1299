package summary

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/measure/plan"
	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/spicelive"
	"github.com/shakenfist/quicbench/shapedlink"
	"github.com/shakenfist/quicbench/stats"
)

// fakeRun is a measured run whose samples after a 1 s warm-up are base,
// base+1ms, ..., base+19ms.
func fakeRun(cell results.Cell, arm measure.Arm, repeat int, base time.Duration) results.Run {
	r := results.Run{Schema: results.SchemaVersion, Cell: cell, Arm: string(arm), Repeat: repeat,
		Started: time.Unix(1e9, 0), Finished: time.Unix(1e9+30, 0), Duration: 10 * time.Second, Warmup: time.Second}
	for i := range 20 {
		r.Samples = append(r.Samples, stats.Sample{Offset: time.Second + time.Duration(i)*100*time.Millisecond, RTT: base + time.Duration(i)*time.Millisecond})
	}
	return r
}

func writeRuns(t *testing.T, c spicelive.Config, reading string, arm measure.Arm, cell results.Cell, bases ...time.Duration) {
	t.Helper()
	for i, b := range bases {
		r := fakeRun(cell, arm, i+1, b)
		if err := results.WriteJSON(filepath.Join(results.RunDir(c.ReadingDir(reading), cell, string(arm), i+1), results.RunFile), r); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSummaryReadsEveryReadingWithTheHeadlinesRule(t *testing.T) {
	c := spicelive.Config{Workdir: t.TempDir(), Readings: spicelive.AllReadings(), Arms: []measure.Arm{measure.TCP, measure.QUIC}, Repeats: 3, Warmup: time.Second}
	cell, _, _ := cellOf(c, "80:10:1")
	cell.CC = "reno"
	ms := func(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }
	// live: quic 60 ms worse with spreads of 2 ms: worse.
	writeRuns(t, c, spicelive.ReadingLive, measure.TCP, cell, ms(80), ms(81), ms(82))
	writeRuns(t, c, spicelive.ReadingLive, measure.QUIC, cell, ms(140), ms(141), ms(142))
	// replay: 5 ms apart with a 30 ms spread: unresolved.
	writeRuns(t, c, spicelive.ReadingReplay, measure.TCP, cell, ms(80), ms(110), ms(95))
	writeRuns(t, c, spicelive.ReadingReplay, measure.QUIC, cell, ms(85), ms(86), ms(87))
	// synthetic: quic better.
	writeRuns(t, c, spicelive.ReadingSynthetic, measure.TCP, cell, ms(170), ms(171), ms(172))
	writeRuns(t, c, spicelive.ReadingSynthetic, measure.QUIC, cell, ms(160), ms(161), ms(160.5))
	var out bytes.Buffer
	if err := Summarise(&out, c); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"## 80 ms / 10 Mbit, 1% loss",
		"| live | quic against tcp | +60.0 | 2.0 | worse |",
		"| replay | quic against tcp | -9.0 | 30.0 | unresolved |",
		"| synthetic | quic against tcp | -10.5 | 2.0 | better |",
		// A lossy cell: every verdict carries its repeats estimate.
		"| live | quic against tcp | +60.0 | 2.0 | worse | 0.100 | spread rule resolves at n=3; U test resolves at n=4 |",
		"| replay | quic against tcp | -9.0 | 30.0 | unresolved | 0.700 | spread rule: not within 100; U test resolves at n=",
		"Model: " + stats.RepeatsModel + ".",
		// By nearest rank, the p50 of base..base+19 is base+9 and the p95
		// base+18; the cell's are the medians over the repeats.
		"| live | tcp | 3 | 90.0 | 99.0 | 100.0 | 2.0 | 98.0-100.0 | 20 | 0 |",
		"| live | quic | 149.0 / 158.0 | 150.0 / 159.0 | 151.0 / 160.0 |",
		"| replay | tcp | 3 | 104.0 | 113.0 | 114.0 | 30.0 | 98.0-128.0 |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the summary lacks %q:\n%s", want, s)
		}
	}
}

// An unresolved verdict of a lossless cell carries its repeats estimate;
// a resolved one does not.
func TestSummaryEstimatesRepeatsForUnresolvedVerdicts(t *testing.T) {
	c := spicelive.Config{Workdir: t.TempDir(), Readings: []string{spicelive.ReadingLive, spicelive.ReadingReplay}, Arms: []measure.Arm{measure.TCP, measure.QUIC}, Repeats: 3, Warmup: time.Second}
	cell, _, _ := cellOf(c, "80:10")
	cell.CC = "reno"
	ms := func(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }
	writeRuns(t, c, spicelive.ReadingLive, measure.TCP, cell, ms(80), ms(81), ms(82))
	writeRuns(t, c, spicelive.ReadingLive, measure.QUIC, cell, ms(140), ms(141), ms(142))
	writeRuns(t, c, spicelive.ReadingReplay, measure.TCP, cell, ms(80), ms(90), ms(85))
	writeRuns(t, c, spicelive.ReadingReplay, measure.QUIC, cell, ms(88), ms(92), ms(84))
	var out bytes.Buffer
	if err := Summarise(&out, c); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"| live | quic against tcp | +60.0 | 2.0 | worse | 0.100 | - |",
		"| replay | quic against tcp | +3.0 | 10.0 | unresolved | 0.700 | spread rule: not within 100; U test resolves at n=",
		"Model: " + stats.RepeatsModel + ".",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the summary lacks %q:\n%s", want, s)
		}
	}
}

func TestControlChecks(t *testing.T) {
	ms := func(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }
	good := []controlCell{
		{Profile: "110:100", RTT: ms(110), P50: ms(113), Min: ms(110.4), MinAllDraws: ms(6)},
		{Profile: "10:100", RTT: ms(10), P50: ms(12), Min: ms(10.3), MinAllDraws: ms(3)},
	}
	for _, k := range checkControl(good) {
		if !k.Pass {
			t.Errorf("a good control fails: %s (%s)", k.What, k.Why)
		}
	}
	// A short round trip where no busy draw fell inside one is fine as
	// long as the long one shows the filter at work.
	short := []controlCell{good[0], good[1]}
	short[1].MinAllDraws = ms(10)
	for _, k := range checkControl(short) {
		if !k.Pass {
			t.Errorf("busy draws shown on 110:100 only: %s fails (%s)", k.What, k.Why)
		}
	}
	for name, change := range map[string]func([]controlCell){
		"busy draws counted": func(cs []controlCell) { cs[0].Min = ms(8) },
		"no busy draws":      func(cs []controlCell) { cs[0].MinAllDraws, cs[1].MinAllDraws = ms(110.3), ms(10.3) },
		"delay not moved":    func(cs []controlCell) { cs[0].P50 = ms(60) },
		"delay doubled":      func(cs []controlCell) { cs[0].P50 = ms(220) },
	} {
		cs := []controlCell{good[0], good[1]}
		change(cs)
		failed := 0
		for _, k := range checkControl(cs) {
			if !k.Pass {
				failed++
			}
		}
		if failed != 1 {
			t.Errorf("%s: %d checks fail, want 1", name, failed)
		}
	}
}

func TestSummaryOfNothing(t *testing.T) {
	c := spicelive.Config{Workdir: t.TempDir(), Readings: spicelive.AllReadings(), Arms: []measure.Arm{measure.TCP}, Repeats: 1}
	if err := Summarise(&bytes.Buffer{}, c); err == nil || !strings.Contains(err.Error(), "no runs") {
		t.Errorf("an empty work directory: %v", err)
	}
	c.Control = true
	if err := Summarise(&bytes.Buffer{}, c); err == nil || errors.Is(err, errControlFailed) {
		t.Errorf("an empty control: %v", err)
	}
}

// The replay reading's line names the shipped recording it played, and
// the reference session only when it played that.
func TestSummaryNamesTheReplaysSource(t *testing.T) {
	for _, tc := range []struct{ recording, want, not string }{
		{"video", `the shipped "video" recording`, "the reference session's shape"},
		{"", "the reference session's shape", "shipped"},
	} {
		c := spicelive.Config{Workdir: t.TempDir(), Readings: []string{spicelive.ReadingReplay}, Arms: []measure.Arm{measure.TCP}, Repeats: 1, Warmup: time.Second, Recording: tc.recording}
		cell, _, _ := cellOf(c, "80:10")
		cell.CC = "reno"
		writeRuns(t, c, spicelive.ReadingReplay, measure.TCP, cell, 80*time.Millisecond)
		var out bytes.Buffer
		if err := Summarise(&out, c); err != nil {
			t.Fatal(err)
		}
		if s := out.String(); !strings.Contains(s, tc.want) || strings.Contains(s, tc.not) {
			t.Errorf("recording %q: want %q and not %q in:\n%s", tc.recording, tc.want, tc.not, s)
		}
	}
}

// cellOf is the cell of a run of c over profile, as c's plan names it.
func cellOf(c spicelive.Config, profile string) (results.Cell, shapedlink.Profile, error) {
	p, err := shapedlink.ParseProfile(profile)
	if err != nil {
		return results.Cell{}, p, err
	}
	return results.Cell{Profile: p.WithLoss(0).String(), RTTms: float64(p.RoundTrip()) / float64(time.Millisecond), RateMbit: p.RateMbit,
		LossPct: p.LossPct, CC: c.CC, Sensitivity: !plan.Matched(c.CC)}, p, nil
}

func ms(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

// displayConfig is a matrix with the display workload w at its defaults.
func displayConfig(w string) spicelive.Config {
	c := spicelive.Config{Profiles: []string{"80:10", "80:10:1"}, Arms: []measure.Arm{measure.TCP, measure.QUIC},
		Readings: []string{spicelive.ReadingLive, spicelive.ReadingReplay}, Repeats: 2, Duration: spicelive.DefaultDisplayDuration,
		Warmup: 5 * time.Second, CC: "reno", KeyInterval: 500 * time.Millisecond, BusyInterval: 50 * time.Millisecond, Settle: 2 * time.Second,
		Reference: "1:100", Workdir: "w", SessionTimeout: time.Minute}
	noFlags := func(string) bool { return false }
	if err := c.SetDisplayFlags(w, "", spicelive.DefaultFrameRate, spicelive.DefaultImageInterval, spicelive.DefaultKeyTimeout, noFlags); err != nil {
		panic(err)
	}
	return c
}
