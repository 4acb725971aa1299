package spicetunnel

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/shakenfist/quicbench/measure"
	"github.com/shakenfist/quicbench/spicelike/spiceproto"
	"github.com/shakenfist/quicbench/spicelike/spicetrace"
	"github.com/shakenfist/quicbench/transport"
)

var le = binary.LittleEndian

// miniHeader is a data message's mini header: type u16, size u32.
const miniHeader = 6

var caps = spiceproto.Caps(spiceproto.CapProtocolAuthSelection, spiceproto.CapAuthSpice, spiceproto.CapMiniHeader)

// drawBody is a SpiceMsgDisplayBase (surface 0, box, no clip) and payload.
func drawBody(box spiceproto.Rect, payload int) []byte {
	b := le.AppendUint32(nil, 0)
	for _, v := range []int32{box.Top, box.Left, box.Bottom, box.Right} {
		b = le.AppendUint32(b, uint32(v))
	}
	b = append(b, 0)
	return append(b, bytes.Repeat([]byte{0xab}, payload)...)
}

// fakeServer is a spice-server stand-in: it answers the link stage of each
// connection, and then on the display channel sends one draw per key
// received on the inputs channel (keys arrive on another connection, so
// the draws are triggered through a channel shared by the connections).
type fakeServer struct {
	ln    net.Listener
	keys  chan uint32
	mu    sync.Mutex
	recvd map[spiceproto.ChannelType][]byte // everything each channel's client sent, for comparison
	sent  map[spiceproto.ChannelType][]byte
}

func newFakeServer(t *testing.T) *fakeServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &fakeServer{ln: ln, keys: make(chan uint32, 16), recvd: map[spiceproto.ChannelType][]byte{}, sent: map[spiceproto.ChannelType][]byte{}}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go s.serve(c)
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return s
}

func (s *fakeServer) serve(c net.Conn) {
	defer c.Close()
	var recvd, sent []byte
	read := func(n int) []byte {
		b := make([]byte, n)
		if _, err := io.ReadFull(c, b); err != nil {
			return nil
		}
		recvd = append(recvd, b...)
		return b
	}
	send := func(b []byte) { sent = append(sent, b...); c.Write(b) }
	hdr := read(spiceproto.LinkHeaderSize)
	if hdr == nil {
		return
	}
	h, _ := spiceproto.ParseLinkHeader(hdr)
	mess, _ := spiceproto.ParseLinkMess(read(int(h.Size)))
	send(spiceproto.LinkReply{CommonCaps: caps}.Marshal())
	read(4 + spiceproto.TicketSize)
	send([]byte{0, 0, 0, 0})
	defer func() {
		s.mu.Lock()
		s.recvd[mess.ChannelType], s.sent[mess.ChannelType] = recvd, sent
		s.mu.Unlock()
	}()
	switch mess.ChannelType {
	case spiceproto.ChannelInputs:
		for {
			h := read(miniHeader)
			if h == nil {
				return
			}
			body := read(int(le.Uint32(h[2:])))
			if spiceproto.MsgType(le.Uint16(h)) == spiceproto.MsgcInputsKeyDown {
				s.keys <- le.Uint32(body)
			}
		}
	case spiceproto.ChannelDisplay:
		for code := range s.keys {
			if code == 0 {
				return // the test's end
			}
			box := spiceproto.Rect{Top: int32(code), Left: 10, Bottom: int32(code) + 13, Right: 16}
			send(spiceproto.AppendData(nil, true, 0, spiceproto.MsgDisplayDrawCopy, drawBody(box, 5000)))
		}
	}
}

// fakeClient links one channel through addr.
func fakeClient(t *testing.T, addr string, ch spiceproto.ChannelType) (net.Conn, *bytes.Buffer) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	sent := &bytes.Buffer{}
	send := func(b []byte) { sent.Write(b); c.Write(b) }
	send(spiceproto.LinkMess{ChannelType: ch, CommonCaps: caps}.Marshal())
	reply := make([]byte, len(spiceproto.LinkReply{CommonCaps: caps}.Marshal()))
	if _, err := io.ReadFull(c, reply); err != nil {
		t.Fatal(err)
	}
	send(append(le.AppendUint32(nil, uint32(spiceproto.CapAuthSpice)), make([]byte, spiceproto.TicketSize)...))
	if _, err := io.ReadFull(c, make([]byte, 4)); err != nil {
		t.Fatal(err)
	}
	return c, sent
}

// A SPICE-shaped session through both ends over each arm: the bytes come
// out unchanged, every message is traced at both ends with the same
// channel index, draws with their box and keys with their code.
func TestTunnelCarriesAndTraces(t *testing.T) {
	cert, err := transport.NewCertificate("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	for _, arm := range []transport.Arm{transport.ArmTCP, transport.ArmQUIC, transport.ArmQUICPerChannel, transport.ArmTCPMux} {
		t.Run(string(arm), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			spice := newFakeServer(t)
			o := transport.Options{CarrierSecret: []byte("a test secret of more than sixteen bytes")}
			if arm.IsQUIC() {
				o.Certificate = cert
			}
			cl, err := measure.ListenCarrier(ctx, arm, "127.0.0.1:0", o)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			var strace, ctrace bytes.Buffer
			st, _ := NewTracer(&strace, spicetrace.SideServer, "")
			ct, _ := NewTracer(&ctrace, spicetrace.SideClient, "")
			server := &ServerEnd{Listener: cl, Trace: st, Dial: func(ctx context.Context) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, "tcp", spice.ln.Addr().String())
			}}
			co := o
			co.Certificate = o.Certificate.ClientOnly()
			carrier, err := measure.DialCarrier(ctx, arm, cl.Addr().String(), co)
			if err != nil {
				t.Fatal(err)
			}
			defer carrier.Close()
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			var events sync.Map
			client := &ClientEnd{Listener: ln, Carrier: carrier, Trace: ct, Events: func(e Event) {
				if e.Msg.Key != nil {
					events.Store("key", e)
				}
			}}
			sctx, stop := context.WithCancel(ctx)
			done := make(chan error, 2)
			go func() { done <- server.Serve(sctx) }()
			go func() { done <- client.Serve(sctx) }()

			// main, then display and inputs, as a SPICE client opens them.
			mainConn, mainSent := fakeClient(t, ln.Addr().String(), spiceproto.ChannelMain)
			disp, dispSent := fakeClient(t, ln.Addr().String(), spiceproto.ChannelDisplay)
			inputs, inSent := fakeClient(t, ln.Addr().String(), spiceproto.ChannelInputs)
			var got bytes.Buffer
			for i, code := range []uint32{100, 200, 300} {
				b := spiceproto.AppendData(nil, true, 0, spiceproto.MsgcInputsKeyDown, le.AppendUint32(nil, code))
				inSent.Write(b)
				inputs.Write(b)
				d := make([]byte, miniHeader+21+5000)
				if _, err := io.ReadFull(disp, d); err != nil {
					t.Fatalf("draw %d: %v", i, err)
				}
				got.Write(d)
			}
			spice.keys <- 0
			inputs.(*net.TCPConn).CloseWrite()
			disp.(*net.TCPConn).CloseWrite()
			mainConn.(*net.TCPConn).CloseWrite()
			io.Copy(io.Discard, disp)
			io.Copy(io.Discard, inputs)
			io.Copy(io.Discard, mainConn)
			time.Sleep(100 * time.Millisecond)
			stop()
			for range 2 {
				if err := <-done; err != nil {
					t.Errorf("Serve: %v", err)
				}
			}

			spice.mu.Lock()
			for ch, sent := range map[spiceproto.ChannelType]*bytes.Buffer{spiceproto.ChannelMain: mainSent,
				spiceproto.ChannelDisplay: dispSent, spiceproto.ChannelInputs: inSent} {
				if !bytes.Equal(spice.recvd[ch], sent.Bytes()) {
					t.Errorf("%v: spice-server received %d bytes, the client sent %d (or they differ)", ch, len(spice.recvd[ch]), sent.Len())
				}
			}
			wantDown := spice.sent[spiceproto.ChannelDisplay]
			spice.mu.Unlock()
			linkBytes := len(spiceproto.LinkReply{CommonCaps: caps}.Marshal()) + 4
			if len(wantDown) < linkBytes || !bytes.Equal(got.Bytes(), wantDown[linkBytes:]) {
				t.Errorf("the display bytes came out changed: %d bytes, spice-server sent %d after the link", got.Len(), len(wantDown)-linkBytes)
			}
			if _, ok := events.Load("key"); !ok {
				t.Error("no key event reached Events")
			}
			for side, buf := range map[string]*bytes.Buffer{"server": &strace, "client": &ctrace} {
				if err := map[string]*Tracer{"server": st, "client": ct}[side].Flush(); err != nil {
					t.Fatal(err)
				}
				checkTrace(t, side, buf)
			}
		})
	}
}

// checkTrace checks one end's trace of the session above.
func checkTrace(t *testing.T, side string, buf *bytes.Buffer) {
	t.Helper()
	tr, err := spicetrace.Read(buf)
	if err != nil {
		t.Fatalf("%s trace: %v", side, err)
	}
	chans := tr.Channels()
	if len(chans) != 3 {
		t.Fatalf("%s trace has %d channels, want 3: %+v", side, len(chans), chans)
	}
	byType := map[string]spicetrace.ChannelInfo{}
	for _, c := range chans {
		byType[c.ChannelType] = c
	}
	if byType["main"].Channel != 0 {
		t.Errorf("%s trace: main is channel %d, want 0 (opened first)", side, byType["main"].Channel)
	}
	var keys, draws []spicetrace.Record
	for _, r := range tr.Records {
		if r.Key != nil {
			keys = append(keys, r)
		}
		if r.Draw != nil {
			draws = append(draws, r)
		}
	}
	if len(keys) != 3 || len(draws) != 3 {
		t.Fatalf("%s trace: %d keys and %d draws, want 3 and 3", side, len(keys), len(draws))
	}
	for i, code := range []uint32{100, 200, 300} {
		if keys[i].Key.Code != code || !keys[i].Key.Down || keys[i].ChannelType != "inputs" || keys[i].Size != 10 {
			t.Errorf("%s trace key %d: %+v %+v", side, i, keys[i], keys[i].Key)
		}
		d := draws[i]
		want := spicetrace.Rect{Top: int32(code), Left: 10, Bottom: int32(code) + 13, Right: 16}
		if d.Draw.Box != want || !d.Draw.Primary || d.Name != "draw_copy" || d.Size != miniHeader+21+5000 {
			t.Errorf("%s trace draw %d: %+v %+v", side, i, d, d.Draw)
		}
		if d.T < keys[i].T {
			t.Errorf("%s trace: draw %d at %v before its key at %v", side, i, d.T, keys[i].T)
		}
	}
	var links int
	for _, r := range tr.Records {
		if r.Stage == spicetrace.StageLink {
			links++
		}
	}
	if links != 3*5 {
		t.Errorf("%s trace: %d link-stage records, want 15 (5 per channel)", side, links)
	}
}

// A connection that is not SPICE still passes unchanged; its parse error
// is reported.
func TestTunnelCarriesWhatItCannotParse(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() {
		c, err := echo.Accept()
		if err == nil {
			io.Copy(c, c)
			c.Close()
		}
	}()
	cl, err := transport.ListenCarrier(ctx, transport.ArmTCP, "127.0.0.1:0", transport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	server := &ServerEnd{Listener: cl, Dial: func(ctx context.Context) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "tcp", echo.Addr().String())
	}}
	carrier, err := transport.DialCarrier(ctx, transport.ArmTCP, cl.Addr().String(), transport.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer carrier.Close()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	client := &ClientEnd{Listener: ln, Carrier: carrier}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 2)
	go func() { done <- server.Serve(sctx) }()
	go func() { done <- client.Serve(sctx) }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	msg := []byte("GET / HTTP/1.0\r\n\r\n and some more bytes that are not SPICE at all")
	c.Write(msg)
	c.(*net.TCPConn).CloseWrite()
	back, err := io.ReadAll(c)
	if err != nil || !bytes.Equal(back, msg) {
		t.Errorf("echo through the tunnel: %q, %v", back, err)
	}
	c.Close()
	deadline := time.Now().Add(5 * time.Second)
	for len(client.Channels()) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	for range 2 {
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	}
	cs := client.Channels()
	if len(cs) != 1 || cs[0].ParseError == "" || cs[0].BytesC2S != int64(len(msg)) || cs[0].BytesS2C != int64(len(msg)) {
		t.Errorf("client end stats %+v, want one channel with a parse error and %d bytes each way", cs, len(msg))
	}
}
