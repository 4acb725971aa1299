package keydraw

import (
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/spicelike/spicetrace"
	"github.com/shakenfist/quicbench/stats"
)

// pathTraces are a client end's and a server end's traces of one key and
// its draw, behind one earlier display message; the server's clock
// starts 10 ms after the client's.
func pathTraces() (client, server *spicetrace.Trace, a Analysis) {
	start := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	key := func(t time.Duration) spicetrace.Record {
		return spicetrace.Record{T: t, Dir: spicetrace.ClientToServer, Channel: 1, ChannelType: "inputs", Stage: spicetrace.StageData, Name: "key_scancode", Size: 8, Carrier: "c"}
	}
	disp := func(t time.Duration, name string, size int, wait time.Duration) spicetrace.Record {
		return spicetrace.Record{T: t, Dir: spicetrace.ServerToClient, Channel: 2, ChannelType: "display", Stage: spicetrace.StageData, Name: name, Size: size, Carrier: "c", WriteWait: wait}
	}
	client = &spicetrace.Trace{Header: spicetrace.Header{Side: spicetrace.SideClient, Started: start}, Records: []spicetrace.Record{
		key(ms(100)), disp(ms(400), "draw_copy", 1000, 0), disp(ms(500), "draw_fill", 60, 0),
	}}
	server = &spicetrace.Trace{Header: spicetrace.Header{Side: spicetrace.SideServer, Started: start.Add(ms(10))}, Records: []spicetrace.Record{
		disp(ms(20), "draw_copy", 1000, ms(5)), key(ms(130)), disp(ms(300), "draw_fill", 60, ms(55)),
	}}
	a = Analysis{Samples: []stats.Sample{{Offset: ms(100), RTT: ms(400)}}, sampled: [][2]int{{0, 2}}}
	return client, server, a
}

func TestKeyPaths(t *testing.T) {
	client, server, a := pathTraces()
	got, err := KeyPaths(client, server, a)
	if err != nil {
		t.Fatal(err)
	}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	// The key reaches the server end at 140 ms (client clock), its draw
	// leaves spice-server at 310 and reaches the client end at 500; the
	// server end spent 50 ms of that writing onward; the earlier 1000
	// bytes were still on their way at 310.
	want := KeyPath{Up: ms(40), Server: ms(170), Unread: ms(50), Down: ms(190), Ahead: 1000}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("KeyPaths = %+v, want [%+v]", got, want)
	}
	if s := got[0]; s.Up+s.Server+s.Down != a.Samples[0].RTT {
		t.Errorf("parts %v + %v + %v do not add up to the key-to-draw %v", s.Up, s.Server, s.Down, a.Samples[0].RTT)
	}

	// Without write times, Unread is not had.
	for i := range server.Records {
		server.Records[i].WriteWait = 0
	}
	if got, err := KeyPaths(client, server, a); err != nil || got[0].Unread != -1 {
		t.Errorf("without write times: %+v, %v; want Unread -1", got, err)
	}
}

func TestKeyPathsRefuse(t *testing.T) {
	client, server, a := pathTraces()
	server.Records[2].Size = 61
	if _, err := KeyPaths(client, server, a); err == nil || !strings.Contains(err.Error(), "draw_fill of 60 bytes at the client end, draw_fill of 61") {
		t.Errorf("traces that disagree: %v", err)
	}
	client, server, a = pathTraces()
	server.Records = server.Records[:2]
	if _, err := KeyPaths(client, server, a); err == nil || !strings.Contains(err.Error(), "not the server end's") {
		t.Errorf("a message missing at the server end: %v", err)
	}
	client, server, a = pathTraces()
	a.sampled = nil
	if _, err := KeyPaths(client, server, a); err == nil {
		t.Error("an analysis not made here was accepted")
	}
}
