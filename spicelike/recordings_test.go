package spicelike

import (
	"bytes"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// TestRecordingsShipped: the package ships one recording per display
// workload, each small, valid, saying how it was made, with keys, and
// with a display channel; a wrong name is refused naming the ones there
// are.
func TestRecordingsShipped(t *testing.T) {
	if got := Recordings(); !slices.Equal(got, []string{"images", "video"}) {
		t.Fatalf("Recordings() = %v, want images and video", got)
	}
	for _, name := range Recordings() {
		st, err := fs.Stat(recordings, "recordings/"+name+recordingExt)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > 500<<10 {
			t.Errorf("%s: %d bytes, want well under 500 KB", name, st.Size())
		}
		r, err := Recording(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.HasPrefix(r.Source, "go run ./examples/spicelive -record "+name) || r.Keys == 0 || !slices.ContainsFunc(r.Channels, func(c ReplayChannel) bool { return c.Name == "display" }) {
			t.Errorf("%s: source %q, %d keys, channels %v: want the command that made it, keys and a display channel", name, r.Source, r.Keys, r.ConfigChannels())
		}
		t.Logf("%s: span %v, %d keys, display %.2f Mbit/s to the client, %d bytes compressed", name, r.Span, r.Keys, r.ChannelMbit("display", true), st.Size())
	}
	if _, err := Recording("vidoe"); err == nil || !strings.Contains(err.Error(), "images, video") {
		t.Errorf("a wrong name: %v, want an error naming images and video", err)
	}
}

func TestReadReplayRoundTrip(t *testing.T) {
	var b bytes.Buffer
	if err := WriteReplay(&b, testReplay()); err != nil {
		t.Fatal(err)
	}
	r, err := ReadReplay(&b)
	if err != nil {
		t.Fatal(err)
	}
	if r.Span != testReplay().Span || r.Keys != testReplay().Keys || len(r.Channels) != len(testReplay().Channels) {
		t.Errorf("read back %+v, want %+v", r, testReplay())
	}
	if _, err := ReadReplay(strings.NewReader(`{"span_ns": 1, "keys": 0, "chanels": []}`)); err == nil {
		t.Error("a misspelt field was read")
	}
	if _, err := ReadReplay(strings.NewReader(`{"span_ns": 0, "keys": 0, "channels": []}`)); err == nil {
		t.Error("an invalid replay was read")
	}
}

// TestTrim: trimming keeps the messages and keys before the new span and
// only the echoes of kept keys, numbering the keys from 0.
func TestTrim(t *testing.T) {
	r := &Replay{Span: time.Second, Keys: 3, Channels: []ReplayChannel{
		{Name: "inputs", Messages: []ReplayMessage{{At: 100 * time.Millisecond, Size: 8, Kind: KindKey, Key: 0},
			{At: 400 * time.Millisecond, Size: 8, Kind: KindKey, Key: 1}, {At: 700 * time.Millisecond, Size: 8, Kind: KindKey, Key: 2}}},
		{Name: "display", Messages: []ReplayMessage{{At: 0, ToClient: true, Size: 500}, {At: 600 * time.Millisecond, ToClient: true, Size: 500},
			{At: 5 * time.Millisecond, ToClient: true, Size: 100, Kind: KindEcho, Key: 2}, {At: 5 * time.Millisecond, ToClient: true, Size: 100, Kind: KindEcho, Key: 1}}},
	}}
	got, err := r.Trim(500 * time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if got.Span != 500*time.Millisecond || got.Keys != 2 || len(got.Channels[0].Messages) != 2 || len(got.Channels[1].Messages) != 2 {
		t.Fatalf("trimmed %+v: want 500ms, keys 0 and 1, one display message and key 1's echo", got)
	}
	if e := got.Channels[1].Messages[1]; e.Kind != KindEcho || e.Key != 1 {
		t.Errorf("echo %+v, want key 1's", e)
	}
	if _, err := r.Trim(0); err == nil {
		t.Error("a zero span was taken")
	}
	if mbit := got.ChannelMbit("display", true); mbit != float64(500+100)*8/0.5/1e6 {
		t.Errorf("display rate %v Mbit/s", mbit)
	}
}

// TestReplayFromTracesLeavesOutInFlightTail: messages the sender traced
// that the receiver's trace ends before are left out; a receiver with
// more than the sender is still refused.
func TestReplayFromTracesLeavesOutInFlightTail(t *testing.T) {
	cl, sv := traces()
	extra := spicetrace.Record{Dir: spicetrace.ServerToClient, Channel: 1, ChannelType: "display", Stage: spicetrace.StageData, Type: 302, Size: 900, T: 1290 * time.Millisecond}
	sv.Records = append(sv.Records, extra)
	r, err := ReplayFromTraces(cl, sv, 0, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if slices.ContainsFunc(r.Channels[0].Messages, func(m ReplayMessage) bool { return m.Size == 900 }) {
		t.Error("the message the client never received was replayed")
	}
	cl, sv = traces()
	extra.T = 290 * time.Millisecond
	cl.Records = append(cl.Records, extra)
	if _, err := ReplayFromTraces(cl, sv, 0, 300*time.Millisecond); err == nil || !strings.Contains(err.Error(), "not one session's traces") {
		t.Errorf("a client that received more than the server sent: %v", err)
	}
}
