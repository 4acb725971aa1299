package spiceproto

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// The bodies below are built field by field from spice.proto's layouts,
// independently of decode.go's offsets.

func u32(v uint32) []byte { return le.AppendUint32(nil, v) }

func rectBytes(r Rect) []byte {
	var b []byte
	for _, v := range []int32{r.Top, r.Left, r.Bottom, r.Right} {
		b = le.AppendUint32(b, uint32(v))
	}
	return b
}

// displayBase is surface_id, box, clip (type NONE), then some payload.
func displayBase(surface uint32, box Rect, payload int) []byte {
	b := u32(surface)
	b = append(b, rectBytes(box)...)
	b = append(b, 0) // SPICE_CLIP_TYPE_NONE
	return append(b, make([]byte, payload)...)
}

func streamCreate(surface, id uint32, dest Rect) []byte {
	b := append(u32(surface), u32(id)...)
	b = append(b, 0, 1)                          // flags, codec_type (mjpeg)
	b = le.AppendUint64(b, 12345)                // stamp
	for _, v := range []uint32{64, 48, 64, 48} { // stream and source sizes
		b = le.AppendUint32(b, v)
	}
	b = append(b, rectBytes(dest)...)
	return append(b, 0) // clip NONE
}

func streamData(id uint32, frame int) []byte {
	b := append(u32(id), u32(777)...) // id, multi_media_time
	b = append(b, u32(uint32(frame))...)
	return append(b, make([]byte, frame)...)
}

func streamDataSized(id uint32, dest Rect, frame int) []byte {
	b := append(u32(id), u32(777)...)
	b = append(b, u32(uint32(dest.Right-dest.Left))...)
	b = append(b, u32(uint32(dest.Bottom-dest.Top))...)
	b = append(b, rectBytes(dest)...)
	b = append(b, u32(uint32(frame))...)
	return append(b, make([]byte, frame)...)
}

func surfaceCreate(id, w, h uint32, primary bool) []byte {
	flags := uint32(0)
	if primary {
		flags = surfaceFlagPrimary
	}
	b := append(u32(id), u32(w)...)
	b = append(b, u32(h)...)
	b = append(b, u32(32)...) // SPICE_SURFACE_FMT_32_xRGB
	return append(b, u32(flags)...)
}

// session is one connection's bytes per direction and the messages a
// parser must report for them.
type session struct {
	c2s, s2c []byte
	want     []Msg // in order per direction; compared per direction
}

func (s *session) link(ch ChannelType, clientCaps, serverCaps []uint32, authSelect bool) {
	s.c2s = append(s.c2s, LinkMess{ConnectionID: 42, ChannelType: ch, CommonCaps: clientCaps, ChannelCaps: Caps(0, 1)}.Marshal()...)
	mess := len(s.c2s)
	reply := LinkReply{CommonCaps: serverCaps, ChannelCaps: Caps(2)}
	reply.PubKey[0] = 0x30 // a DER sequence, for show
	s.s2c = append(s.s2c, reply.Marshal()...)
	s.want = append(s.want,
		Msg{Dir: ClientToServer, Stage: spicetrace.StageLink, Name: nameLinkMess, Size: mess},
		Msg{Dir: ServerToClient, Stage: spicetrace.StageLink, Name: nameLinkReply, Size: len(s.s2c)})
	if authSelect {
		s.c2s = append(s.c2s, u32(uint32(CapAuthSpice))...)
		s.want = append(s.want, Msg{Dir: ClientToServer, Stage: spicetrace.StageLink, Name: nameAuthMechanism, Size: 4})
	}
	s.c2s = append(s.c2s, make([]byte, TicketSize)...)
	s.s2c = append(s.s2c, u32(uint32(LinkErrOK))...)
	s.want = append(s.want,
		Msg{Dir: ClientToServer, Stage: spicetrace.StageLink, Name: nameTicket, Size: TicketSize},
		Msg{Dir: ServerToClient, Stage: spicetrace.StageLink, Name: nameLinkResult, Size: 4})
}

func (s *session) data(dir Direction, ch ChannelType, mini bool, typ MsgType, body []byte, draw *Draw, key *Key) {
	hdr := fullHeaderSize
	if mini {
		hdr = miniHeaderSize
	}
	m := Msg{Dir: dir, Stage: spicetrace.StageData, Type: typ, Name: MessageName(ch, dir, typ), Size: hdr + len(body), Draw: draw, Key: key}
	if dir == ClientToServer {
		s.c2s = AppendData(s.c2s, mini, 1, typ, body)
	} else {
		s.s2c = AppendData(s.s2c, mini, 1, typ, body)
	}
	s.want = append(s.want, m)
}

func displaySession(mini bool) *session {
	s := &session{}
	common := Caps(CapProtocolAuthSelection, CapAuthSpice)
	if mini {
		common = Caps(CapProtocolAuthSelection, CapAuthSpice, CapMiniHeader)
	}
	s.link(ChannelDisplay, common, common, true)
	d := ChannelDisplay
	s.data(ClientToServer, d, mini, MsgcDisplayInit, make([]byte, 9), nil, nil)
	s.data(ServerToClient, d, mini, MsgSetAck, make([]byte, 8), nil, nil)
	s.data(ServerToClient, d, mini, MsgDisplaySurfaceCreate, surfaceCreate(0, 1024, 768, true), nil, nil)
	box := Rect{Top: 2, Left: 70, Bottom: 15, Right: 76}
	s.data(ServerToClient, d, mini, MsgDisplayDrawCopy, displayBase(0, box, 3000), &Draw{Surface: 0, Primary: true, Box: box}, nil)
	s.data(ServerToClient, d, mini, MsgDisplayDrawFill, displayBase(3, box, 20), &Draw{Surface: 3, Primary: false, Box: box}, nil)
	cb := Rect{Top: 400, Left: 0, Bottom: 700, Right: 480}
	s.data(ServerToClient, d, mini, MsgDisplayCopyBits, append(displayBase(0, cb, 0), make([]byte, 8)...), &Draw{Primary: true, Box: cb}, nil)
	dest := Rect{Top: 500, Left: 10, Bottom: 548, Right: 74}
	s.data(ServerToClient, d, mini, MsgDisplayStreamCreate, streamCreate(0, 7, dest), nil, nil)
	s.data(ServerToClient, d, mini, MsgDisplayStreamData, streamData(7, 5000), &Draw{Primary: true, Box: dest, Stream: true}, nil)
	moved := Rect{Top: 510, Left: 10, Bottom: 558, Right: 74}
	s.data(ServerToClient, d, mini, MsgDisplayStreamDataSized, streamDataSized(7, moved, 100), &Draw{Primary: true, Box: moved, Stream: true}, nil)
	s.data(ServerToClient, d, mini, MsgDisplayStreamData, streamData(8, 10), nil, nil) // unknown stream
	s.data(ServerToClient, d, mini, MsgDisplayStreamDestroy, u32(7), nil, nil)
	s.data(ServerToClient, d, mini, MsgDisplayStreamData, streamData(7, 10), nil, nil) // destroyed
	s.data(ServerToClient, d, mini, MsgDisplayMode+1, nil, nil, nil)                   // mark: empty body
	s.data(ClientToServer, d, mini, MsgcAck, nil, nil, nil)
	return s
}

func inputsSession(mini bool) *session {
	s := &session{}
	common := Caps(CapAuthSpice) // no auth selection: the ticket follows the link message
	if mini {
		common = Caps(CapAuthSpice, CapMiniHeader)
	}
	s.link(ChannelInputs, common, common, false)
	in := ChannelInputs
	s.data(ServerToClient, in, mini, 101, []byte{0, 0}, nil, nil) // inputs init: modifiers
	s.data(ClientToServer, in, mini, MsgcInputsKeyDown, u32(0x1e), nil, &Key{Code: 0x1e, Down: true})
	s.data(ClientToServer, in, mini, MsgcInputsKeyUp, u32(0x9e), nil, &Key{Code: 0x9e, Down: false})
	s.data(ClientToServer, in, mini, MsgcInputsKeyScancode, []byte{0x1f}, nil, &Key{Code: 0x1f, Down: true})
	s.data(ClientToServer, in, mini, MsgcInputsKeyScancode, []byte{0x9f}, nil, &Key{Code: 0x9f, Down: false})
	s.data(ClientToServer, in, mini, MsgcInputsKeyScancode, []byte{0xe0, 0x48}, nil, &Key{Code: 0xe048, Down: true})
	s.data(ClientToServer, in, mini, MsgcInputsKeyScancode, []byte{0xe0, 0xc8}, nil, &Key{Code: 0xe0c8, Down: false})
	s.data(ClientToServer, in, mini, 111, make([]byte, 10), nil, nil) // mouse motion: no key
	return s
}

// feed gives c the session's bytes in chunks cut by next(remaining), the
// whole client-to-server link stage first as a real client would (it
// waits for the reply only after sending its link message).
func feed(t *testing.T, c *Conn, s *session, next func(int) int) []Msg {
	t.Helper()
	var got []Msg
	push := func(dir Direction, b []byte) {
		for len(b) > 0 {
			n := min(len(b), max(1, next(len(b))))
			ms, err := c.Feed(dir, b[:n])
			if err != nil {
				t.Fatalf("Feed(%v, %d bytes): %v", dir, n, err)
			}
			got = append(got, ms...)
			b = b[n:]
		}
	}
	// Interleave: all client bytes, then all server bytes. The client's
	// bytes after its link message are held until the reply arrives.
	push(ClientToServer, s.c2s)
	push(ServerToClient, s.s2c)
	return got
}

func perDirection(ms []Msg) map[Direction][]Msg {
	out := map[Direction][]Msg{}
	for _, m := range ms {
		out[m.Dir] = append(out[m.Dir], m)
	}
	return out
}

func TestConnFollowsSessionsWhateverTheChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	chunkings := map[string]func(int) int{
		"whole":   func(n int) int { return n },
		"bytes":   func(int) int { return 1 },
		"random":  func(n int) int { return 1 + rng.IntN(min(n, 700)) },
		"sevens":  func(int) int { return 7 },
		"headers": func(int) int { return miniHeaderSize + 1 },
	}
	for _, mini := range []bool{true, false} {
		for name, build := range map[string]func(bool) *session{"display": displaySession, "inputs": inputsSession} {
			for cname, next := range chunkings {
				s := build(mini)
				c := NewConn()
				got := perDirection(feed(t, c, s, next))
				want := perDirection(s.want)
				for _, dir := range []Direction{ClientToServer, ServerToClient} {
					if !reflect.DeepEqual(got[dir], want[dir]) {
						t.Errorf("%s mini=%v chunks=%s %v:\n got %s\nwant %s", name, mini, cname, dir, dump(got[dir]), dump(want[dir]))
					}
				}
				if c.MiniHeader() != mini {
					t.Errorf("%s: MiniHeader() = %v, want %v", name, c.MiniHeader(), mini)
				}
			}
		}
	}
}

func dump(ms []Msg) string {
	var b strings.Builder
	for _, m := range ms {
		b.WriteString("\n  ")
		b.WriteString(m.Dir.String() + " " + string(m.Stage) + " " + m.Name)
		if m.Draw != nil {
			b.WriteString(" draw")
		}
		if m.Key != nil {
			b.WriteString(" key")
		}
	}
	return b.String()
}

func TestChannelFromTheLinkMessage(t *testing.T) {
	c := NewConn()
	if _, _, ok := c.Channel(); ok {
		t.Error("Channel() reports a channel before the link message")
	}
	b := LinkMess{ChannelType: ChannelCursor, ChannelID: 3, CommonCaps: Caps(CapMiniHeader)}.Marshal()
	if _, err := c.Feed(ClientToServer, b[:10]); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := c.Channel(); ok {
		t.Error("Channel() reports a channel from half a link message")
	}
	if _, err := c.Feed(ClientToServer, b[10:]); err != nil {
		t.Fatal(err)
	}
	typ, id, ok := c.Channel()
	if !ok || typ != ChannelCursor || id != 3 {
		t.Errorf("Channel() = %v %d %v, want cursor 3 true", typ, id, ok)
	}
}

// Only both ends' MINI_HEADER makes the mini header: the client's alone
// leaves the full header.
func TestMiniHeaderNeedsBothEnds(t *testing.T) {
	for _, tc := range []struct {
		client, server bool
	}{{true, true}, {true, false}, {false, true}, {false, false}} {
		s := &session{}
		caps := func(mini bool) []uint32 {
			if mini {
				return Caps(CapProtocolAuthSelection, CapAuthSpice, CapMiniHeader)
			}
			return Caps(CapProtocolAuthSelection, CapAuthSpice)
		}
		s.link(ChannelMain, caps(tc.client), caps(tc.server), true)
		mini := tc.client && tc.server
		s.data(ServerToClient, ChannelMain, mini, 103, make([]byte, 32), nil, nil) // main init
		s.data(ClientToServer, ChannelMain, mini, 104, nil, nil, nil)              // attach channels
		got := feed(t, NewConn(), s, func(n int) int { return n })
		if !reflect.DeepEqual(perDirection(got), perDirection(s.want)) {
			t.Errorf("client mini %v, server mini %v: got %s\nwant %s", tc.client, tc.server, dump(got), dump(s.want))
		}
	}
}

// A client's bytes fed before the reply are held and returned with it.
func TestClientBytesBeforeTheReplyAreHeld(t *testing.T) {
	s := inputsSession(true)
	c := NewConn()
	ms, err := c.Feed(ClientToServer, s.c2s)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].Name != nameLinkMess {
		t.Fatalf("before the reply: %s, want only the link message", dump(ms))
	}
	ms, err = c.Feed(ServerToClient, s.s2c)
	if err != nil {
		t.Fatal(err)
	}
	got := perDirection(append([]Msg{{Dir: ClientToServer, Stage: spicetrace.StageLink, Name: nameLinkMess, Size: ms0size(s)}}, ms...))
	if want := perDirection(s.want); !reflect.DeepEqual(got, want) {
		t.Errorf("got %s\nwant %s", dump(append(got[ClientToServer], got[ServerToClient]...)), dump(append(want[ClientToServer], want[ServerToClient]...)))
	}
}

func ms0size(s *session) int { return s.want[0].Size }

func TestRefusedLink(t *testing.T) {
	c := NewConn()
	if _, err := c.Feed(ClientToServer, LinkMess{ChannelType: ChannelMain}.Marshal()); err != nil {
		t.Fatal(err)
	}
	ms, err := c.Feed(ServerToClient, LinkReply{Error: LinkErrPermissionDenied}.Marshal())
	if err != nil || len(ms) != 1 || ms[0].Name != nameLinkReply {
		t.Fatalf("reply: %s, %v", dump(ms), err)
	}
	if _, err := c.Feed(ServerToClient, []byte{1}); !errors.Is(err, ErrNotSpice) {
		t.Errorf("bytes after a refused link: %v, want ErrNotSpice", err)
	}
	if _, err := c.Feed(ClientToServer, []byte{1}); !errors.Is(err, ErrNotSpice) {
		t.Errorf("client bytes after a refused link: %v, want ErrNotSpice", err)
	}
}

func TestFailedAuthentication(t *testing.T) {
	s := &session{}
	caps := Caps(CapProtocolAuthSelection, CapAuthSpice, CapMiniHeader)
	s.link(ChannelMain, caps, caps, true)
	// A link result other than OK: nothing follows.
	s.s2c = s.s2c[:len(s.s2c)-4]
	s.s2c = append(s.s2c, u32(uint32(LinkErrPermissionDenied))...)
	c := NewConn()
	feed(t, c, s, func(n int) int { return n })
	if _, err := c.Feed(ServerToClient, make([]byte, 6)); !errors.Is(err, ErrNotSpice) {
		t.Errorf("data after a failed link result: %v, want ErrNotSpice", err)
	}
}

func TestNotSpiceSaysWhy(t *testing.T) {
	mess := LinkMess{ChannelType: ChannelMain, CommonCaps: Caps(CapProtocolAuthSelection, CapAuthSpice)}.Marshal()
	badVersion := append([]byte(nil), mess...)
	le.PutUint32(badVersion[4:], 1)
	badCaps := append([]byte(nil), mess...)
	le.PutUint32(badCaps[LinkHeaderSize+6:], 1000) // 1000 common caps in a short body
	for _, tc := range []struct {
		name  string
		dir   Direction
		bytes []byte
		want  string
	}{
		{"tls", ClientToServer, []byte{0x16, 0x03, 0x01, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, "not \"REDQ\""},
		{"version", ClientToServer, badVersion, "protocol 1.2"},
		{"caps", ClientToServer, badCaps, "capability words"},
		{"huge", ServerToClient, LinkHeader{Magic: magic, Major: 2, Minor: 2, Size: 1 << 20}.marshal(nil), "1048576-byte link message"},
		{"empty", ClientToServer, LinkHeader{Magic: magic, Major: 2, Minor: 2}.marshal(nil), "empty link message"},
	} {
		c := NewConn()
		_, err := c.Feed(tc.dir, tc.bytes)
		if !errors.Is(err, ErrNotSpice) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrNotSpice saying %q", tc.name, err, tc.want)
		}
		if _, again := c.Feed(tc.dir, []byte{0}); again == nil || again.Error() != err.Error() {
			t.Errorf("%s: the next Feed says %v, want the same error again", tc.name, again)
		}
	}
}

func TestSASLIsRefusedWithAReason(t *testing.T) {
	caps := Caps(CapProtocolAuthSelection, CapAuthSASL)
	c := NewConn()
	c.Feed(ClientToServer, LinkMess{ChannelType: ChannelMain, CommonCaps: caps}.Marshal())
	c.Feed(ServerToClient, LinkReply{CommonCaps: caps}.Marshal())
	_, err := c.Feed(ClientToServer, u32(uint32(CapAuthSASL)))
	if !errors.Is(err, ErrNotSpice) || !strings.Contains(err.Error(), "SASL") {
		t.Errorf("SASL: %v", err)
	}
}

func TestOversizedDataMessage(t *testing.T) {
	s := &session{}
	caps := Caps(CapProtocolAuthSelection, CapAuthSpice, CapMiniHeader)
	s.link(ChannelDisplay, caps, caps, true)
	c := NewConn()
	feed(t, c, s, func(n int) int { return n })
	hdr := le.AppendUint16(nil, uint16(MsgDisplayDrawCopy))
	hdr = le.AppendUint32(hdr, 1<<30)
	if _, err := c.Feed(ServerToClient, hdr); !errors.Is(err, ErrNotSpice) || !strings.Contains(err.Error(), "mini-header") {
		t.Errorf("a 1 GiB message: %v", err)
	}
}

func TestCaps(t *testing.T) {
	caps := Caps(0, 3, 33)
	if len(caps) != 2 || caps[0] != 0b1001 || caps[1] != 0b10 {
		t.Errorf("Caps(0, 3, 33) = %b", caps)
	}
	for n, want := range map[Cap]bool{0: true, 1: false, 3: true, 33: true, 64: false, 1 << 31: false} {
		if HasCap(caps, n) != want {
			t.Errorf("HasCap(%b, %d) = %v", caps, n, !want)
		}
	}
}

func TestLinkMessagesRoundTrip(t *testing.T) {
	m := LinkMess{ConnectionID: 0xdeadbeef, ChannelType: ChannelPlayback, ChannelID: 2, CommonCaps: Caps(1, 3), ChannelCaps: Caps(0, 40)}
	b := m.Marshal()
	h, err := ParseLinkHeader(b)
	if err != nil || int(h.Size) != len(b)-LinkHeaderSize {
		t.Fatalf("header %+v, %v", h, err)
	}
	got, err := ParseLinkMess(b[LinkHeaderSize:])
	if err != nil || !reflect.DeepEqual(got, m) {
		t.Errorf("ParseLinkMess = %+v, %v; want %+v", got, err, m)
	}
	r := LinkReply{Error: 0, CommonCaps: Caps(0, 1, 3), ChannelCaps: Caps(5)}
	r.PubKey[7] = 9
	b = r.Marshal()
	gr, err := parseLinkReply(b[LinkHeaderSize:])
	if err != nil || !reflect.DeepEqual(gr, r) {
		t.Errorf("parseLinkReply = %+v, %v", gr, err)
	}
}

func TestMessageNames(t *testing.T) {
	for _, tc := range []struct {
		ch   ChannelType
		dir  Direction
		typ  MsgType
		want string
	}{
		{ChannelDisplay, ServerToClient, 304, "draw_copy"},
		{ChannelDisplay, ServerToClient, 3, "set_ack"},
		{ChannelDisplay, ClientToServer, 2, "ack"},
		{ChannelInputs, ClientToServer, 104, "key_scancode"},
		{ChannelInputs, ServerToClient, 104, ""},
		{ChannelPlayback, ServerToClient, 101, ""},
		{ChannelMain, ServerToClient, 103, "init"},
	} {
		if got := MessageName(tc.ch, tc.dir, tc.typ); got != tc.want {
			t.Errorf("MessageName(%v, %v, %d) = %q, want %q", tc.ch, tc.dir, tc.typ, got, tc.want)
		}
	}
	if ChannelType(42).String() != "channel-42" || ChannelUSBRedir.String() != "usbredir" {
		t.Error("channel type names")
	}
}

// Client bytes held until the reply that turn out not to parse stop the
// whole connection, with an error naming the client, whether the reply
// comes alone or with the server's next messages in one Feed.
func TestHeldClientBytesThatDoNotParse(t *testing.T) {
	caps := Caps(CapProtocolAuthSelection, CapAuthSpice)
	c2s := append(LinkMess{ChannelType: ChannelMain, CommonCaps: caps}.Marshal(), u32(99)...) // mechanism 99
	reply := LinkReply{CommonCaps: caps}.Marshal()
	rest := append(u32(uint32(LinkErrOK)), AppendData(nil, false, 1, MsgSetAck, make([]byte, 8))...)
	want := []string{nameLinkMess, nameLinkReply}
	for name, s2c := range map[string][][]byte{
		"one Feed":            {append(append([]byte(nil), reply...), rest...)},
		"the reply alone":     {reply, rest},
		"the reply then more": {reply, rest[:4], rest[4:]},
	} {
		c := NewConn()
		got, err := c.Feed(ClientToServer, c2s)
		if err != nil {
			t.Fatal(err)
		}
		var first error
		for i, b := range s2c {
			ms, err := c.Feed(ServerToClient, b)
			got = append(got, ms...)
			switch {
			case i == 0:
				first = err
				var fe *FeedError
				if !errors.As(err, &fe) || fe.Dir != ClientToServer || !errors.Is(err, ErrNotSpice) || !strings.Contains(err.Error(), "mechanism 99") {
					t.Fatalf("%s: the reply's Feed returned %v, want a FeedError for the client's mechanism 99", name, err)
				}
			case err != first || len(ms) != 0:
				t.Errorf("%s: Feed %d of the server's bytes returned %s and %v, want nothing and the same error", name, i, dump(ms), err)
			}
		}
		if ms, err := c.Feed(ClientToServer, make([]byte, TicketSize)); err != first || len(ms) != 0 {
			t.Errorf("%s: the client's next Feed returned %s and %v, want nothing and the same error", name, dump(ms), err)
		}
		var names []string
		for _, m := range got {
			names = append(names, m.Name)
		}
		if !reflect.DeepEqual(names, want) {
			t.Errorf("%s: messages %v, want %v (nothing of the server's after the reply)", name, names, want)
		}
	}
}

// What is held before the reply is bounded: maxHeld bytes are held, one
// more is an error naming the client.
func TestHeldBytesAreBounded(t *testing.T) {
	caps := Caps(CapAuthSpice)
	c := NewConn()
	if _, err := c.Feed(ClientToServer, LinkMess{ChannelType: ChannelMain, CommonCaps: caps}.Marshal()); err != nil {
		t.Fatal(err)
	}
	chunk := make([]byte, 1000)
	held := 0
	for held+len(chunk) <= maxHeld {
		if _, err := c.Feed(ClientToServer, chunk); err != nil {
			t.Fatalf("after %d bytes held: %v", held, err)
		}
		held += len(chunk)
	}
	_, err := c.Feed(ClientToServer, chunk)
	var fe *FeedError
	if !errors.As(err, &fe) || fe.Dir != ClientToServer || !strings.Contains(err.Error(), "before the server's reply") {
		t.Fatalf("%d bytes held and %d more: %v, want a FeedError for the client", held, len(chunk), err)
	}
	if n := len(c.dirs[ClientToServer].pending); n > maxHeld {
		t.Errorf("%d bytes held, more than maxHeld %d", n, maxHeld)
	}
}

// The stream table is bounded: maxStreams live streams are followed,
// destroying one makes room, re-creating an id takes none, and one more is
// an error naming the server.
func TestStreamTableIsBounded(t *testing.T) {
	s := &session{}
	caps := Caps(CapProtocolAuthSelection, CapAuthSpice, CapMiniHeader)
	s.link(ChannelDisplay, caps, caps, true)
	c := NewConn()
	feed(t, c, s, func(n int) int { return n })
	send := func(typ MsgType, body []byte) ([]Msg, error) {
		return c.Feed(ServerToClient, AppendData(nil, true, 0, typ, body))
	}
	dest := Rect{Bottom: 10, Right: 10}
	for id := range uint32(maxStreams) {
		if _, err := send(MsgDisplayStreamCreate, streamCreate(0, 1000+id, dest)); err != nil {
			t.Fatalf("stream %d: %v", id, err)
		}
	}
	if _, err := send(MsgDisplayStreamCreate, streamCreate(0, 1000, dest)); err != nil {
		t.Fatalf("re-creating a live stream: %v", err)
	}
	if _, err := send(MsgDisplayStreamDestroy, u32(1000)); err != nil {
		t.Fatal(err)
	}
	if _, err := send(MsgDisplayStreamCreate, streamCreate(0, 5000, dest)); err != nil {
		t.Fatalf("a stream in the room a destroyed one left: %v", err)
	}
	if ms, err := send(MsgDisplayStreamData, streamData(5000, 10)); err != nil || len(ms) != 1 || ms[0].Draw == nil {
		t.Fatalf("a frame of the newest stream: %s, %v", dump(ms), err)
	}
	_, err := send(MsgDisplayStreamCreate, streamCreate(0, 6000, dest))
	var fe *FeedError
	if !errors.As(err, &fe) || fe.Dir != ServerToClient || !strings.Contains(err.Error(), "stream") {
		t.Fatalf("stream %d: %v, want a FeedError for the server", maxStreams+1, err)
	}
	if len(c.streams) > maxStreams {
		t.Errorf("%d streams kept, more than maxStreams %d", len(c.streams), maxStreams)
	}
}
