package spiceproto

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/shakenfist/quicbench/spicelike/spicetrace"
)

// testdata/session holds the raw bytes of a real session, as the tunnel's
// client end captured them (examples/spicetunnel -capture): spicy 0.42
// connected to Xspice (spice-server 0.15, Debian 12) over the tcp arm on
// loopback, the main channel, then display, inputs and cursor; an xterm
// at +0+0 of the 1024x768 screen running cat, and "hello" typed into it.
// ch<N>-c2s.bin.gz is what the client sent on connection N, ch<N>-s2c.bin.gz
// what the server sent. The ticket is the fixed test password encrypted
// with the server's one-time key; nothing else is secret.

func readCapture(t *testing.T, ch int, dir Direction) []byte {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "session", fmt.Sprintf("ch%d-%v.bin.gz", ch, dir)))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(z)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRealSession(t *testing.T) {
	wantType := []ChannelType{ChannelMain, ChannelDisplay, ChannelInputs, ChannelCursor}
	var keys []uint32
	var draws []Draw
	var bigPing bool
	for ch, want := range wantType {
		c := NewConn()
		var msgs []Msg
		sizes := map[Direction]int{}
		lens := map[Direction]int{}
		// The client's whole capture first: what follows its link message
		// is held until the server's reply is fed.
		for _, dir := range []Direction{ClientToServer, ServerToClient} {
			b := readCapture(t, ch, dir)
			lens[dir] = len(b)
			ms, err := c.Feed(dir, b)
			if err != nil {
				t.Fatalf("channel %d %v: %v", ch, dir, err)
			}
			msgs = append(msgs, ms...)
		}
		typ, _, ok := c.Channel()
		if !ok || typ != want {
			t.Errorf("connection %d is %v, want %v", ch, typ, want)
		}
		if !c.MiniHeader() {
			t.Errorf("connection %d: spicy and spice-server did not agree on the mini header", ch)
		}
		var link []string
		for _, m := range msgs {
			sizes[m.Dir] += m.Size
			if m.Stage == spicetrace.StageLink {
				link = append(link, m.Name)
			}
			if m.Key != nil && m.Key.Down {
				keys = append(keys, m.Key.Code)
			}
			if m.Draw != nil {
				draws = append(draws, *m.Draw)
			}
			if m.Name == "ping" && m.Size > 200<<10 {
				bigPing = true // spice-server's bandwidth test on the main channel
			}
		}
		slices.Sort(link)
		if want := []string{nameAuthMechanism, nameLinkMess, nameLinkReply, nameLinkResult, nameTicket}; !slices.Equal(link, want) {
			t.Errorf("connection %d link stage %v, want %v", ch, link, want)
		}
		for _, dir := range []Direction{ClientToServer, ServerToClient} {
			if sizes[dir] != lens[dir] {
				t.Errorf("connection %d %v: messages account for %d of %d bytes", ch, dir, sizes[dir], lens[dir])
			}
		}
	}
	// h, e, l, l, o in scancode set 1.
	if want := []uint32{0x23, 0x12, 0x26, 0x26, 0x18}; !slices.Equal(keys, want) {
		t.Errorf("key presses %#x, want h e l l o (%#x)", keys, want)
	}
	if len(draws) < 5 {
		t.Fatalf("%d draws, want at least the 5 echoes", len(draws))
	}
	typing := 0
	for _, d := range draws {
		b := d.Box
		if !d.Primary || b.Left < 0 || b.Top < 0 || b.Right > 1024 || b.Bottom > 768 || b.Right <= b.Left || b.Bottom <= b.Top {
			t.Errorf("draw %+v is not a box on the 1024x768 primary surface", d)
		}
		if b.Right <= 484 && b.Bottom <= 316 {
			typing++
		}
	}
	if typing < 5 {
		t.Errorf("%d draws inside the xterm, want at least the 5 echoes", typing)
	}
	if !bigPing {
		t.Error("the main channel's bandwidth-test ping (over 200 KiB) was not seen whole")
	}
}
