package spicetrace

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRoundTripKeepsEveryField(t *testing.T) {
	var buf bytes.Buffer
	start := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	w, err := NewWriter(&buf, Header{Side: SideServer, Started: start, Note: "tcp 80:10"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Record{
		{T: 5, Dir: ClientToServer, Channel: 0, Stage: StageLink, Name: "link_mess", Size: 42},
		{T: 7, Dir: ServerToClient, Channel: 3, ChannelType: "display", ChannelID: 1, Stage: StageData, Type: 123,
			Name: "stream_data", Size: 5000, Draw: &Draw{Surface: 4, Primary: false, Box: Rect{1, 2, 3, 4}, Stream: true}},
		{T: 9, Dir: ClientToServer, Channel: 2, ChannelType: "inputs", Stage: StageData, Type: 104, Size: 7,
			Key: &Key{Code: 0xe048, Down: false}, Tag: "key"},
	}
	for _, r := range want {
		if err := w.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	got, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got.Header.Format != format || got.Header.Side != SideServer || !got.Header.Started.Equal(start) || got.Header.Note != "tcp 80:10" {
		t.Errorf("header %+v", got.Header)
	}
	if len(got.Records) != len(want) {
		t.Fatalf("%d records, want %d", len(got.Records), len(want))
	}
	for i := range want {
		g, w := got.Records[i], want[i]
		if g.T != w.T || g.Dir != w.Dir || g.Channel != w.Channel || g.ChannelType != w.ChannelType || g.ChannelID != w.ChannelID ||
			g.Stage != w.Stage || g.Type != w.Type || g.Name != w.Name || g.Size != w.Size || g.Tag != w.Tag {
			t.Errorf("record %d: got %+v, want %+v", i, g, w)
		}
		if (g.Draw == nil) != (w.Draw == nil) || g.Draw != nil && *g.Draw != *w.Draw {
			t.Errorf("record %d draw: got %+v, want %+v", i, g.Draw, w.Draw)
		}
		if (g.Key == nil) != (w.Key == nil) || g.Key != nil && *g.Key != *w.Key {
			t.Errorf("record %d key: got %+v, want %+v", i, g.Key, w.Key)
		}
	}
}

func TestConcurrentWritersKeepWholeLines(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Header{Side: SideClient, Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				_ = w.Write(Record{T: time.Duration(i), Dir: ServerToClient, Channel: g, Stage: StageData, Type: 1, Size: 100 + i})
			}
		})
	}
	wg.Wait()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	tr, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Records) != 8*200 {
		t.Fatalf("%d records, want %d", len(tr.Records), 8*200)
	}
	for _, c := range tr.Channels() {
		if c.Messages[ServerToClient] != 200 {
			t.Errorf("channel %d: %d messages, want 200", c.Channel, c.Messages[ServerToClient])
		}
	}
}

func TestReadSaysWhatIsWrong(t *testing.T) {
	hdr := `{"format":"quicbench.spicetrace/1","side":"client","started":"2026-12-01T12:00:00Z"}` + "\n"
	for _, tc := range []struct{ in, want string }{
		{"", "empty input"},
		{`{"format":"other"}` + "\n", `format "other"`},
		{"not json\n", "line 1 is not a trace header"},
		{hdr + `{"t_ns":1,"dir":"up","ch":0,"stage":"data","type":1,"size":6}` + "\n", `line 2: spicetrace: record direction "up"`},
		{hdr + `{"t_ns":1,"dir":"c2s","ch":0,"stage":"data","type":1,"size":-6}` + "\n", "line 2: spicetrace: record size -6"},
		{hdr + "\n" + `{"t_ns":1,"dir":"c2s","ch":0,"stage":"middle","type":1,"size":6}` + "\n", `line 3: spicetrace: record stage "middle"`},
		{hdr + "{\n", "line 2"},
	} {
		_, err := Read(strings.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Read(%q) = %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}

func TestWriterRefusesBadInput(t *testing.T) {
	if _, err := NewWriter(&bytes.Buffer{}, Header{Side: "middle", Started: time.Now()}); err == nil {
		t.Error("NewWriter took side \"middle\"")
	}
	if _, err := NewWriter(&bytes.Buffer{}, Header{Side: SideClient}); err == nil {
		t.Error("NewWriter took a header with no start time")
	}
	w, err := NewWriter(&bytes.Buffer{}, Header{Side: SideClient, Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(Record{Dir: "sideways", Stage: StageData}); err == nil {
		t.Error("Write took direction \"sideways\"")
	}
}

func TestRectIntersects(t *testing.T) {
	a := Rect{Top: 0, Left: 0, Bottom: 10, Right: 10}
	for _, tc := range []struct {
		b    Rect
		want bool
	}{
		{Rect{5, 5, 15, 15}, true},
		{Rect{10, 0, 20, 10}, false}, // touches the bottom edge: bottom is exclusive
		{Rect{0, 10, 10, 20}, false}, // touches the right edge
		{Rect{9, 9, 10, 10}, true},   // the last pixel
		{Rect{3, 3, 3, 8}, false},    // empty
		{Rect{-5, -5, 1, 1}, true},
	} {
		if got := a.Intersects(tc.b); got != tc.want {
			t.Errorf("%+v.Intersects(%+v) = %v, want %v", a, tc.b, got, tc.want)
		}
		if got := tc.b.Intersects(a); got != tc.want {
			t.Errorf("%+v.Intersects(%+v) = %v, want %v (not symmetric)", tc.b, a, got, tc.want)
		}
	}
}
