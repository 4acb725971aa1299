package transport

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// encodeMux is frames as the tcp-mux writer puts them on the wire.
func encodeMux(frames ...muxTestFrame) []byte {
	var b []byte
	for _, f := range frames {
		kind := f.kind
		if kind == 0 {
			kind = muxData
		}
		h := make([]byte, muxHeaderLen)
		putMuxHeader(h, muxFrame{kind: kind, channel: f.channel, length: len(f.payload)})
		b = append(append(b, h...), f.payload...)
	}
	return b
}

// muxTestFrame is a frame to encode; kind 0 is data.
type muxTestFrame struct {
	channel int
	kind    byte
	payload []byte
}

// Frames read back as written, of every size up to the limit, and the
// stream ends with io.EOF exactly at a frame boundary.
func TestMuxFramesRoundTrip(t *testing.T) {
	big := bytes.Repeat([]byte{0xab}, muxMaxPayload)
	frames := []muxTestFrame{{0, muxData, []byte("a")}, {4, muxData, big}, {2, muxFin, nil}, {1, muxCredit, []byte{0, 1, 0, 0}}, {4, muxData, []byte("after")}}
	r := bytes.NewReader(encodeMux(frames...))
	buf := make([]byte, muxMaxPayload)
	for i, want := range frames {
		f, p, err := readMuxFrame(r, 5, buf)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if f.channel != want.channel || f.kind != want.kind || !bytes.Equal(p, want.payload) {
			t.Fatalf("frame %d: %+v with %d bytes, want %+v", i, f, len(p), want)
		}
	}
	if _, _, err := readMuxFrame(r, 5, buf); err != io.EOF {
		t.Errorf("after the last frame: %v, want io.EOF", err)
	}
}

// Bad frames are refused with an error that says what was wrong.
func TestMuxFramesRefused(t *testing.T) {
	oversize := []byte{muxData, 0, 0x40, 0x01} // 16385 bytes
	for _, c := range []struct {
		name string
		in   []byte
		want string
	}{
		{"kind", []byte{'X', 0, 0, 1, 'a'}, "has kind 0x58, not data, fin, credit, open or refuse"},
		{"channel", encodeMux(muxTestFrame{5, muxData, []byte("a")}), "channel 5 of a 5-channel session"},
		{"short credit", []byte{muxCredit, 1, 0, 2, 0, 1}, "carries 2 bytes; it carries 4"},
		{"oversize", append(oversize, make([]byte, muxMaxPayload+1)...), "frames carry 1 to 16384"},
		{"empty data", []byte{muxData, 1, 0, 0}, "of 0 bytes"},
		{"fin with data", []byte{muxFin, 1, 0, 1, 'a'}, "fin frame for channel 1 carries 1 bytes"},
		{"open with data", []byte{muxOpen, 1, 0, 1, 'a'}, "open frame for channel 1 carries 1 bytes"},
		{"cut header", []byte{muxData, 1}, "inside a frame header"},
		{"cut payload", []byte{muxData, 1, 0, 9, 'a'}, "reading the 9 bytes of a frame for channel 1: unexpected EOF"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := readMuxFrame(bytes.NewReader(c.in), 5, make([]byte, muxMaxPayload))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error saying %q", err, c.want)
			}
			if c.name == "cut payload" && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("a stream cut inside a payload: %v, want io.ErrUnexpectedEOF", err)
			}
		})
	}
}

// The hello carries the channel count, and a server refuses another
// count, another version or another protocol, saying which.
func TestMuxHello(t *testing.T) {
	if err := checkMuxHello(muxHello(5, muxModeSession), 5, muxModeSession); err != nil {
		t.Fatal(err)
	}
	if err := checkMuxHello(muxHello(5, muxModeSession), 5, muxModeCarrier); err == nil || !strings.Contains(err.Error(), "dial with transport.DialMuxCarrier") {
		t.Errorf("a session's hello to a carrier's server: %v", err)
	}
	other := muxHello(5, muxModeSession)
	other[4] = muxVersion + 1
	for _, c := range []struct {
		in   []byte
		want string
	}{
		{muxHello(3, muxModeSession), "the client has 3 channels and this server 5"},
		{other, fmt.Sprintf("version %d", muxVersion+1)},
		{[]byte("QBC1abcd"), "not a tcp-mux hello"},
		{muxHello(5, muxModeCarrier), "listen with transport.ListenMuxCarrier"},
	} {
		if err := checkMuxHello(c.in, 5, muxModeSession); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("hello % x: %v, want an error saying %q", c.in, err, c.want)
		}
	}
}

// FuzzMuxFrames: whatever the bytes, the decoder does not panic, reads
// only frames that are within the limits, and what it read re-encodes to
// exactly the bytes it consumed.
func FuzzMuxFrames(f *testing.F) {
	f.Add(encodeMux(muxTestFrame{0, muxData, []byte("hello")}, muxTestFrame{3, muxFin, nil}, muxTestFrame{2, muxCredit, []byte{0, 0, 0, 9}}))
	f.Add(encodeMux(muxTestFrame{1, muxData, bytes.Repeat([]byte{1}, muxMaxPayload)}))
	f.Add([]byte{muxData, 0, 0xff, 0xff})
	f.Add([]byte{muxFin, 9, 0, 0})
	f.Add([]byte{'X', 0, 0, 0})
	f.Add([]byte{muxData, 2, 0, 3, 'a'})
	f.Fuzz(func(t *testing.T, in []byte) {
		r := bytes.NewReader(in)
		buf := make([]byte, muxMaxPayload)
		var again []byte
		for {
			fr, p, err := readMuxFrame(r, 5, buf)
			if err != nil {
				if err == io.EOF && len(again) != len(in) {
					t.Fatalf("io.EOF after %d of %d bytes", len(again), len(in))
				}
				break
			}
			want := map[byte]bool{muxData: len(p) >= 1 && len(p) <= muxMaxPayload, muxFin: len(p) == 0, muxCredit: len(p) == 4,
				muxOpen: len(p) == 0, muxRefuse: len(p) >= 1 && len(p) <= muxMaxPayload}
			if fr.channel >= 5 || !want[fr.kind] {
				t.Fatalf("accepted %+v with %d bytes", fr, len(p))
			}
			again = append(again, encodeMux(muxTestFrame{fr.channel, fr.kind, p})...)
		}
		if !bytes.HasPrefix(in, again) {
			t.Fatalf("the frames read re-encode to % x, not a prefix of the input", again)
		}
	})
}
