package keydraw

import (
	"slices"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/spicelike"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

var (
	typingArea = spicetrace.Rect{Top: 0, Left: 0, Bottom: 316, Right: 484}
	busyArea   = spicetrace.Rect{Top: 400, Left: 0, Bottom: 534, Right: 484}
)

func ms(n float64) time.Duration { return time.Duration(n * float64(time.Millisecond)) }

func key(t time.Duration) spicetrace.Record {
	return spicetrace.Record{T: t, Dir: spicetrace.ClientToServer, Channel: 2, ChannelType: "inputs", Stage: spicetrace.StageData,
		Type: 104, Size: 8, Key: &spicetrace.Key{Code: 30, Down: true}}
}

func keyUp(t time.Duration) spicetrace.Record {
	r := key(t)
	r.Key = &spicetrace.Key{Code: 0x9e, Down: false}
	return r
}

func draw(t time.Duration, box spicetrace.Rect, primary bool) spicetrace.Record {
	return spicetrace.Record{T: t, Dir: spicetrace.ServerToClient, Channel: 1, ChannelType: "display", Stage: spicetrace.StageData,
		Type: 304, Size: 146, Draw: &spicetrace.Draw{Primary: primary, Box: box}}
}

var (
	glyph    = spicetrace.Rect{Top: 3, Left: 9, Bottom: 16, Right: 15}
	busyLine = spicetrace.Rect{Top: 500, Left: 0, Bottom: 513, Right: 300}
)

// A busy draw lands right after every key; only the typing area's draws
// are the answers.
func TestBusyDrawsAreNotCounted(t *testing.T) {
	tr := &spicetrace.Trace{}
	add := func(r spicetrace.Record) { tr.Records = append(tr.Records, r) }
	add(key(ms(50)))               // before the typing: ignored
	add(draw(ms(60), glyph, true)) // likewise
	for i, lat := range []float64{80, 95, 120} {
		k := ms(1000 + 500*float64(i))
		add(key(k))
		add(keyUp(k + ms(12)))
		add(draw(k+ms(3), busyLine, true))  // the busy area, 3 ms after the key
		add(draw(k+ms(10), glyph, false))   // an off-screen surface: not the screen
		add(draw(k+ms(lat), glyph, true))   // the echo
		add(draw(k+ms(lat+1), glyph, true)) // a second draw of the same key: not a new answer
		add(draw(k+ms(lat+40), busyLine, true))
	}
	a := Analyse(tr, typingArea, busyArea, ms(1000))
	var got []time.Duration
	for _, s := range a.Samples {
		got = append(got, s.RTT)
	}
	if want := []time.Duration{ms(80), ms(95), ms(120)}; !slices.Equal(got, want) {
		t.Errorf("key-to-draw %v, want %v (the busy draws 3 ms after each key must not count)", got, want)
	}
	if a.Samples[1].Offset != ms(500) {
		t.Errorf("second key at offset %v, want 500ms from the typing's start", a.Samples[1].Offset)
	}
	if a.Keys != 3 || a.Unanswered != 0 || a.BusyDraws != 6 || a.TypingDraws != 6 || a.OtherDraws != 0 {
		t.Errorf("counts %+v", a)
	}
	if a.AllDrawsMin != ms(3) {
		t.Errorf("counting every draw would give %v at least, want the busy draw's 3ms", a.AllDrawsMin)
	}
	a.Tag(tr)
	var tags []string
	for _, r := range tr.Records {
		if r.Tag != "" {
			tags = append(tags, r.Tag)
		}
	}
	if want := []string{spicelike.TagKey, spicelike.TagEcho, spicelike.TagKey, spicelike.TagEcho, spicelike.TagKey, spicelike.TagEcho}; !slices.Equal(tags, want) {
		t.Errorf("tags %v, want %v", tags, want)
	}
}

// A key with no answer before the next key is unanswered, and the key
// after it is not measured: its first draw may be the late answer.
func TestUnansweredKeys(t *testing.T) {
	tr := &spicetrace.Trace{Records: []spicetrace.Record{
		key(ms(0)), draw(ms(100), glyph, true),
		key(ms(500)), draw(ms(520), busyLine, true), // no answer before the next key
		key(ms(1000)), draw(ms(1050), glyph, true), // perhaps the answer to the key at 500
		key(ms(1500)), draw(ms(1590), glyph, true),
		key(ms(2000)), // the last key: never answered
	}}
	a := Analyse(tr, typingArea, busyArea, 0)
	if a.Keys != 5 || a.Unanswered != 2 || a.AfterUnanswered != 1 || len(a.Samples) != 2 {
		t.Fatalf("%d keys, %d unanswered, %d after one, %d samples; want 5, 2, 1, 2", a.Keys, a.Unanswered, a.AfterUnanswered, len(a.Samples))
	}
	if a.Samples[0].RTT != ms(100) || a.Samples[1].RTT != ms(90) {
		t.Errorf("samples %+v", a.Samples)
	}
	if !slices.Equal(a.UnansweredAt, []time.Duration{ms(500), ms(2000)}) {
		t.Errorf("unanswered at %v", a.UnansweredAt)
	}
}

// Records written out of time order by concurrent relays are read in time
// order.
func TestOutOfOrderRecords(t *testing.T) {
	tr := &spicetrace.Trace{Records: []spicetrace.Record{
		draw(ms(130), glyph, true), key(ms(100)), draw(ms(110), busyLine, true),
	}}
	a := Analyse(tr, typingArea, busyArea, 0)
	if len(a.Samples) != 1 || a.Samples[0].RTT != ms(30) || a.AllDrawsMin != ms(10) {
		t.Errorf("%+v", a)
	}
}
