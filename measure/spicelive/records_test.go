package spicelive

import (
	"slices"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure/results"
	"github.com/shakenfist/quicbench/measure/spicelive/keydraw"
	"github.com/shakenfist/quicbench/measure/spicelive/xsession"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
	"github.com/shakenfist/quicbench/stats"
)

// The xterms' rectangles on Xspice's screen, and a client-end trace's
// records, as the tests' sessions have them.
var (
	typingArea = spicetrace.Rect{Top: 0, Left: 0, Bottom: 316, Right: 484}
	busyArea   = spicetrace.Rect{Top: 400, Left: 0, Bottom: 534, Right: 484}
	glyph      = spicetrace.Rect{Top: 3, Left: 9, Bottom: 16, Right: 15}
)

func ms(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

func key(t time.Duration) spicetrace.Record {
	return spicetrace.Record{T: t, Dir: spicetrace.ClientToServer, Channel: 2, ChannelType: "inputs", Stage: spicetrace.StageData,
		Type: 104, Size: 8, Key: &spicetrace.Key{Code: 30, Down: true}}
}

func draw(t time.Duration, box spicetrace.Rect, primary bool) spicetrace.Record {
	return spicetrace.Record{T: t, Dir: spicetrace.ServerToClient, Channel: 1, ChannelType: "display", Stage: spicetrace.StageData,
		Type: 304, Size: 146, Draw: &spicetrace.Draw{Primary: primary, Box: box}}
}

// glyphs is the box of the glyphs in columns from to to (inclusive) of a
// row of typingArea (6x13 cells, 3 pixels in).
func glyphs(row, from, to int) spicetrace.Rect {
	return spicetrace.Rect{Top: int32(3 + 13*row), Bottom: int32(16 + 13*row), Left: int32(3 + 6*from), Right: int32(3 + 6*(to+1))}
}

// A run with a workload is analysed by glyph, which times a key drawn
// after the next was pressed; one without is analysed as before, which
// cuts that key off and leaves out the key after it.
func TestAnalyseRunChoosesByWorkload(t *testing.T) {
	tr := &spicetrace.Trace{Records: []spicetrace.Record{
		key(ms(0)), key(ms(500)), draw(ms(1200), glyphs(0, 0, 1), true),
	}}
	s, cl := &ServerResult{Typing: typingArea, Busy: busyArea}, &ClientResult{TypingEnd: 30 * time.Second}
	old := AnalyseRun(goodConfig(), tr, s, cl)
	glyph := AnalyseRun(displayConfig(xsession.DisplayImages), tr, s, cl)
	if old.Method != "" || len(old.Samples) != 0 || old.Unanswered != 1 || old.AfterUnanswered != 1 {
		t.Errorf("without a workload: %+v, want the first key unanswered and the second left out after it", old)
	}
	if glyph.Method != keydraw.MethodGlyph || len(glyph.Samples) != 2 || glyph.Unanswered != 0 {
		t.Errorf("with a workload: %+v, want both keys timed", glyph)
	}
}

// A live run's samples hold its censored keys at the timeout, in the
// order typed, so that its percentiles count them.
func TestFillRunCountsCensoredKeys(t *testing.T) {
	c := displayConfig(xsession.DisplayVideo)
	rec := &LiveRecord{Client: &ClientResult{TypingEnd: 10 * time.Second}, Analysis: keydraw.Analysis{
		Samples:    []stats.Sample{{Offset: 0, RTT: ms(100)}, {Offset: ms(2000), RTT: ms(200)}},
		Censored:   []stats.Sample{{Offset: ms(1000), RTT: c.KeyTimeout}},
		Unanswered: 1,
	}}
	var run results.Run
	fillRun(&run, c, rec, &spicetrace.Trace{})
	if want := []stats.Sample{{Offset: 0, RTT: ms(100)}, {Offset: ms(1000), RTT: c.KeyTimeout}, {Offset: ms(2000), RTT: ms(200)}}; !slices.Equal(run.Samples, want) {
		t.Errorf("run samples %v, want %v", run.Samples, want)
	}
	if run.Timeouts != 1 {
		t.Errorf("timeouts %d, want 1", run.Timeouts)
	}
	s, err := stats.SummariseRepeat(run.StatsRepeat(), 0)
	if err != nil || s.P99 != c.KeyTimeout {
		t.Errorf("p99 %v (%v), want the timeout %v", s.P99, err, c.KeyTimeout)
	}
}
