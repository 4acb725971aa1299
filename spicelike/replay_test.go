package spicelike

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// testReplay is a 500 ms recording: the server draws 1000 bytes on the
// display every 10 ms, the client presses a key every 100 ms on inputs
// (with an ack on display now and then), and each key's echo is a 150-byte
// draw 5 ms after the key reaches the server.
func testReplay() *Replay {
	r := &Replay{Span: 500 * time.Millisecond, Keys: 5}
	disp := ReplayChannel{Name: "display"}
	for at := time.Duration(0); at < r.Span; at += 10 * time.Millisecond {
		disp.Messages = append(disp.Messages, ReplayMessage{At: at, ToClient: true, Size: 1000})
	}
	for at := 5 * time.Millisecond; at < r.Span; at += 50 * time.Millisecond {
		disp.Messages = append(disp.Messages, ReplayMessage{At: at, Size: 6}) // an ack: smaller than a frame header
	}
	in := ReplayChannel{Name: "inputs"}
	for k := range r.Keys {
		in.Messages = append(in.Messages, ReplayMessage{At: time.Duration(k)*100*time.Millisecond + 20*time.Millisecond, Size: 8, Kind: KindKey, Key: k})
		disp.Messages = append(disp.Messages, ReplayMessage{At: 5 * time.Millisecond, ToClient: true, Size: 150, Kind: KindEcho, Key: k})
	}
	r.Channels = []ReplayChannel{{Name: "main", Messages: []ReplayMessage{{At: 0, ToClient: true, Size: 38}}}, disp, in}
	return r
}

func replayConfig(r *Replay, d time.Duration) Config {
	cfg := Defaults()
	cfg.Replay = r
	cfg.Channels = r.ConfigChannels()
	cfg.Duration, cfg.Warmup, cfg.Timeout = d, 0, 2*time.Second
	return cfg
}

// delayed holds every write of a connection for a while: a slow path in
// one direction.
type delayed struct {
	net.Conn
	d time.Duration
}

func (w delayed) Write(b []byte) (int, error) {
	time.Sleep(w.d)
	return w.Conn.Write(b)
}

func TestReplayPlaysSizesTimesAndEchoes(t *testing.T) {
	r := testReplay()
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	cfg := replayConfig(r, 1200*time.Millisecond) // two spans and a bit: the recording loops
	cc, sc := tcpPairs(t, len(cfg.Channels))
	res := runPair(context.Background(), cfg, rws(cc), rws(sc))
	requireClean(t, res)
	c, s := res.client, res.server
	// Keys at 20, 120, ... ms of each span: 12 fit in 1.2 s, and each has
	// an echo.
	if len(c.Samples) < 9 || len(c.Samples) > 12 {
		t.Errorf("%d key-to-echo samples, want 9 to 12 (12 keys fit in %v)", len(c.Samples), cfg.Duration)
	}
	if c.Timeouts != 0 {
		t.Errorf("%d timeouts on loopback", c.Timeouts)
	}
	for _, x := range c.Samples {
		if x.RTT < 5*time.Millisecond {
			t.Errorf("key at %v echoed after %v, before the server's 5 ms think time", x.Offset, x.RTT)
		}
		if phase := (x.Offset % r.Span) % (100 * time.Millisecond); phase < 20*time.Millisecond {
			t.Errorf("key sent at %v, before its recorded time (20 ms into each 100 ms)", x.Offset)
		}
	}
	if s.Replay == nil || c.Replay == nil {
		t.Fatal("no replay statistics")
	}
	// The server sends 50 draws per span (one each 10 ms) and main's one
	// message, until the client's end frame arrives: a little after 1.2 s,
	// later on a loaded machine, so the most it may send is counted from
	// how long it ran; fewer if a loaded machine leaves some late when the
	// run ends.
	ran := s.End.Sub(s.Start)
	most := int64(ran/(10*time.Millisecond)) + 1 + int64(ran/r.Span) + 1
	if got := s.Replay.Messages - s.Replay.Echoes; got < 80 || got > most {
		t.Errorf("server sent %d scheduled messages in %v, want 80 to %d", got, ran, most)
	}
	if s.Replay.Echoes != int64(len(c.Samples)) {
		t.Errorf("server sent %d echoes, the client timed %d", s.Replay.Echoes, len(c.Samples))
	}
	// The 6-byte acks grow by 3 bytes to a frame header, the 8-byte keys
	// by 1.
	if c.Replay.Inflated == 0 || c.Replay.InflatedBytes < c.Replay.Inflated || c.Replay.InflatedBytes > 3*c.Replay.Inflated {
		t.Errorf("client inflated %d messages by %d bytes, want 1 to 3 bytes each", c.Replay.Inflated, c.Replay.InflatedBytes)
	}
	if want := s.Replay.Bytes; c.BulkBytesTotal < want*9/10 || c.BulkBytesTotal > want {
		t.Errorf("client counted %d server bytes, the server sent %d", c.BulkBytesTotal, want)
	}
}

// The replay measures the path: a delay on the server's writes of the
// display channel shows in every key-to-echo time.
func TestReplayMeasuresTheTransport(t *testing.T) {
	const delay = 40 * time.Millisecond
	r := testReplay()
	cfg := replayConfig(r, 600*time.Millisecond)
	cc, sc := tcpPairs(t, len(cfg.Channels))
	srv := rws(sc)
	srv[1] = delayed{Conn: sc[1], d: delay}
	res := runPair(context.Background(), cfg, rws(cc), srv)
	requireClean(t, res)
	if len(res.client.Samples) == 0 {
		t.Fatal("no samples")
	}
	for _, x := range res.client.Samples {
		if x.RTT < delay+5*time.Millisecond {
			t.Errorf("key at %v echoed after %v: less than the delay %v plus the 5 ms think time", x.Offset, x.RTT, delay)
		}
	}
	// The delayed draws cannot keep their 10 ms spacing: the server is late.
	if res.server.Replay.Late == 0 || res.server.Replay.MaxLate < delay {
		t.Errorf("server lateness %d messages, at most %v; want the %v delay to show", res.server.Replay.Late, res.server.Replay.MaxLate, delay)
	}
}

func TestReplayValidation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(r *Replay)
		want   string
	}{
		{"no span", func(r *Replay) { r.Span = 0 }, "Span is 0s"},
		{"dup name", func(r *Replay) { r.Channels[1].Name = "main" }, `"main" is empty or used twice`},
		{"size", func(r *Replay) { r.Channels[0].Messages[0].Size = 0 }, "size 0"},
		{"late", func(r *Replay) { r.Channels[0].Messages[0].At = time.Second }, "outside the span"},
		{"kind", func(r *Replay) { r.Channels[0].Messages[0].Kind = "poke" }, `kind "poke"`},
		{"key range", func(r *Replay) { r.Channels[2].Messages[0].Key = 9 }, "key 9"},
		{"key way", func(r *Replay) { r.Channels[2].Messages[0].ToClient = true }, "goes the wrong way"},
		{"twice", func(r *Replay) { r.Channels[2].Messages[1].Key = 0 }, "key 0 is pressed 2 times"},
		{"order", func(r *Replay) { r.Channels[1].Messages[1].At = 0; r.Channels[1].Messages[0].At = 3 * time.Millisecond },
			"keep each direction in time order"},
	} {
		r := testReplay()
		tc.change(r)
		err := r.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", tc.name, err, tc.want)
		}
	}
	cfg := replayConfig(testReplay(), time.Second)
	cfg.Channels[0].Name = "other"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "ConfigChannels") {
		t.Errorf("mismatched channels: %v", err)
	}
	cfg = Defaults()
	cfg.Channels[0].Role = Replayed
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "no Replay") {
		t.Errorf("a replayed channel without a replay: %v", err)
	}
}

// traces returns a client and a server trace of one small session: the
// server's clock starts 1 s earlier than the client's, the client presses
// a key at 100 ms that reaches the server end 30 ms later (server time
// 1130 ms), which draws the echo 7 ms after that, and the display draws
// in the busy area every 50 ms.
func traces() (client, server *spicetrace.Trace) {
	t0 := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	client = &spicetrace.Trace{Header: spicetrace.Header{Side: spicetrace.SideClient, Started: t0}}
	server = &spicetrace.Trace{Header: spicetrace.Header{Side: spicetrace.SideServer, Started: t0.Add(-time.Second)}}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	both := func(ct, st time.Duration, r spicetrace.Record) {
		r.T = ct
		client.Records = append(client.Records, r)
		r.T, r.Tag = st, ""
		server.Records = append(server.Records, r)
	}
	link := spicetrace.Record{Dir: spicetrace.ClientToServer, Channel: 0, ChannelType: "main", Stage: spicetrace.StageLink, Size: 38}
	both(ms(1), ms(1000), link)
	for i := range 6 {
		// A busy draw leaves the server at server time 1000+50i and reaches
		// the client 30 ms later.
		both(ms(50*i+30), ms(1000+50*i), spicetrace.Record{Dir: spicetrace.ServerToClient, Channel: 1, ChannelType: "display",
			Stage: spicetrace.StageData, Type: 302, Size: 500 + i})
	}
	both(ms(100), ms(1130), spicetrace.Record{Dir: spicetrace.ClientToServer, Channel: 2, ChannelType: "inputs",
		Stage: spicetrace.StageData, Type: 104, Size: 8, Tag: TagKey})
	both(ms(167), ms(1137), spicetrace.Record{Dir: spicetrace.ServerToClient, Channel: 1, ChannelType: "display",
		Stage: spicetrace.StageData, Type: 304, Size: 146, Tag: TagEcho})
	return client, server
}

func TestReplayFromTraces(t *testing.T) {
	cl, sv := traces()
	r, err := ReplayFromTraces(cl, sv, 0, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if r.Span != 300*time.Millisecond || r.Keys != 1 {
		t.Errorf("span %v, %d keys; want 300ms and 1", r.Span, r.Keys)
	}
	names := []string{}
	for _, c := range r.Channels {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, []string{"display", "inputs"}) {
		t.Errorf("channels %v, want display and inputs (main carried no data)", names)
	}
	disp := r.Channels[0].Messages
	var sched []time.Duration
	var echo *ReplayMessage
	for i, m := range disp {
		if m.Kind == KindEcho {
			echo = &disp[i]
			continue
		}
		sched = append(sched, m.At)
	}
	// Server-side times from the window's start (client time 0 = server
	// time 1000 ms): 0, 50, ..., 250 ms, not the client's 30, 80, ...
	want := []time.Duration{0, 50, 100, 150, 200, 250}
	for i := range want {
		want[i] *= time.Millisecond
	}
	if !slices.Equal(sched, want) {
		t.Errorf("scheduled draws at %v, want the server's times %v", sched, want)
	}
	if echo == nil || echo.At != 7*time.Millisecond || echo.Key != 0 || echo.Size != 146 {
		t.Errorf("echo %+v, want key 0, 146 bytes, 7 ms after the key reached the server", echo)
	}
	key := r.Channels[1].Messages[0]
	if key.Kind != KindKey || key.At != 100*time.Millisecond || key.ToClient {
		t.Errorf("key %+v, want at the client's 100 ms", key)
	}
	// A window that leaves the key out leaves its echo out too.
	r, err = ReplayFromTraces(cl, sv, 0, 90*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if r.Keys != 0 || slices.ContainsFunc(r.Channels[0].Messages, func(m ReplayMessage) bool { return m.Kind != KindScheduled }) {
		t.Errorf("window before the key: %d keys, messages %+v", r.Keys, r.Channels[0].Messages)
	}
}

func TestReplayFromTracesRefusesMismatches(t *testing.T) {
	cl, sv := traces()
	sv.Records[3].Size++
	if _, err := ReplayFromTraces(cl, sv, 0, time.Second); err == nil || !strings.Contains(err.Error(), "not one session") && !strings.Contains(err.Error(), "in the server's") {
		t.Errorf("a size mismatch: %v", err)
	}
	cl, sv = traces()
	sv.Records = sv.Records[:len(sv.Records)-1]
	if _, err := ReplayFromTraces(cl, sv, 0, time.Second); err == nil || !strings.Contains(err.Error(), "not one session's traces") {
		t.Errorf("a missing message: %v", err)
	}
	cl, sv = traces()
	if _, err := ReplayFromTraces(sv, cl, 0, time.Second); err == nil || !strings.Contains(err.Error(), "want the client's and the server's") {
		t.Errorf("swapped traces: %v", err)
	}
	if _, err := ReplayFromTraces(cl, sv, time.Second, time.Second); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("an empty window: %v", err)
	}
}
