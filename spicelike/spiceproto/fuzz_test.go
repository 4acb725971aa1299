package spiceproto

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// fed is what a Conn returned for one way of feeding it: every message up
// to the first error, and that error.
type fed struct {
	msgs []Msg
	err  error
}

// phase is a run of one direction's bytes fed before the next phase's.
type phase struct {
	dir Direction
	b   []byte
}

// feedPhases feeds the phases in order, each cut into chunks by cut, and
// checks the error contract on the way: once a Feed has failed, every
// later Feed of either direction returns the same error and no messages.
func feedPhases(t *testing.T, phases []phase, cut func(int) int) fed {
	t.Helper()
	c := NewConn()
	var r fed
	in := map[Direction]int{}
	for _, p := range phases {
		in[p.dir] += len(p.b)
		for b := p.b; len(b) > 0; {
			n := min(len(b), max(1, cut(len(b))))
			ms, err := c.Feed(p.dir, b[:n])
			b = b[n:]
			if r.err != nil {
				if err != r.err || len(ms) != 0 {
					t.Fatalf("after %v, Feed(%v) returned %d messages and %v; want no messages and the same error", r.err, p.dir, len(ms), err)
				}
				continue
			}
			r.msgs = append(r.msgs, ms...)
			if err != nil {
				var fe *FeedError
				if !errors.As(err, &fe) || !errors.Is(err, ErrNotSpice) || (fe.Dir != ClientToServer && fe.Dir != ServerToClient) {
					t.Fatalf("Feed(%v): %v (%T), want a *FeedError naming a direction and wrapping ErrNotSpice", p.dir, err, err)
				}
				r.err = err
			}
		}
	}
	if r.err != nil {
		for _, dir := range []Direction{ClientToServer, ServerToClient} {
			if ms, err := c.Feed(dir, []byte{0}); err != r.err || len(ms) != 0 {
				t.Fatalf("after %v, a last Feed(%v) returned %d messages and %v", r.err, dir, len(ms), err)
			}
		}
	}
	out := map[Direction]int{}
	for _, m := range r.msgs {
		if m.Size <= 0 || (m.Dir != ClientToServer && m.Dir != ServerToClient) {
			t.Fatalf("message %+v", m)
		}
		out[m.Dir] += m.Size
	}
	for dir, n := range out {
		if n > in[dir] {
			t.Fatalf("%v: messages account for %d bytes of %d fed", dir, n, in[dir])
		}
	}
	return r
}

func (r fed) String() string {
	return fmt.Sprintf("%s\n  error: %v", dump(r.msgs), r.err)
}

// sameFed reports whether two feedings gave the same messages and the same
// error (by direction and text: the values are of different Conns).
func sameFed(a, b fed) bool {
	if len(a.msgs) != len(b.msgs) || (len(a.msgs) > 0 && !reflect.DeepEqual(a.msgs, b.msgs)) {
		return false
	}
	if (a.err == nil) != (b.err == nil) {
		return false
	}
	if a.err == nil {
		return true
	}
	var ea, eb *FeedError
	return errors.As(a.err, &ea) && errors.As(b.err, &eb) && ea.Dir == eb.Dir && a.err.Error() == b.err.Error()
}

// reproC2S is the client's side of a case fuzzing found: a link message
// (full header, no auth selection of its own) and six bytes after it that
// are held until the server's reply, which offers auth selection, so they
// are read as an authentication mechanism SPICE does not define.
const reproC2S = "REDQ\x02\x00\x00\x000000\x16\x00\x00\x00000000\x01\x00\x00\x00\x00\x00\x00\x00\x12\x00\x00\x0000000000"

// reproS2C is the server's side: a link reply offering auth selection, an
// OK link result and one data message with the full header.
func reproS2C() []byte {
	b := LinkReply{CommonCaps: Caps(CapProtocolAuthSelection, CapAuthSpice)}.Marshal()
	b = append(b, u32(uint32(LinkErrOK))...)
	return AppendData(b, false, 1, MsgSetAck, make([]byte, 8))
}

// FuzzFeed feeds arbitrary bytes of both directions, in phases (the
// client's first c2sCut bytes, the server's first s2cCut bytes, then the
// rest of each), twice: each phase whole, and each phase cut into chunks
// drawn from seed. Nothing may panic, the error contract must hold, and
// the two feedings must give the same messages and the same error: where
// a Feed's bytes are cut must not change what is traced.
func FuzzFeed(f *testing.F) {
	for _, mini := range []bool{false, true} {
		for _, s := range []*session{displaySession(mini), inputsSession(mini)} {
			f.Add(s.c2s, s.s2c, uint16(0xffff), uint16(0xffff), uint64(1))
			f.Add(s.c2s, s.s2c, uint16(40), uint16(200), uint64(2))
		}
	}
	f.Add([]byte(reproC2S), reproS2C(), uint16(0xffff), uint16(0xffff), uint64(3))
	refused := LinkReply{Error: LinkErrPermissionDenied}.Marshal()
	f.Add(LinkMess{ChannelType: ChannelMain}.Marshal(), append(refused, 1, 2, 3), uint16(0xffff), uint16(0xffff), uint64(4))
	f.Fuzz(func(t *testing.T, c2s, s2c []byte, c2sCut, s2cCut uint16, seed uint64) {
		k, j := min(int(c2sCut), len(c2s)), min(int(s2cCut), len(s2c))
		phases := []phase{{ClientToServer, c2s[:k]}, {ServerToClient, s2c[:j]}, {ClientToServer, c2s[k:]}, {ServerToClient, s2c[j:]}}
		whole := feedPhases(t, phases, func(n int) int { return n })
		rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		chunked := feedPhases(t, phases, func(n int) int {
			if rng.IntN(3) == 0 {
				return 1
			}
			return 1 + rng.IntN(n)
		})
		if !sameFed(whole, chunked) {
			t.Fatalf("the same bytes in other chunks:\nwhole phases:%v\nchunked:%v", whole, chunked)
		}
	})
}

// FuzzParseLink parses arbitrary bytes as a link header, link message and
// link reply. Nothing may panic or allocate beyond the input, a header
// accepted is one a SPICE 2.x peer sends, and a message or reply accepted
// marshals to bytes that parse to the same value.
func FuzzParseLink(f *testing.F) {
	f.Add(LinkMess{ConnectionID: 7, ChannelType: ChannelDisplay, CommonCaps: Caps(0, 1, 3), ChannelCaps: Caps(2)}.Marshal())
	f.Add(LinkReply{CommonCaps: Caps(0, 1, 3), ChannelCaps: Caps(40)}.Marshal())
	f.Add([]byte(reproC2S))
	f.Fuzz(func(t *testing.T, b []byte) {
		if h, err := ParseLinkHeader(b); err == nil {
			if h.Magic != magic || h.Major != versionMajor || h.Size > maxLinkBody {
				t.Fatalf("accepted header %+v", h)
			}
		}
		body := b[min(len(b), LinkHeaderSize):]
		if m, err := ParseLinkMess(body); err == nil {
			if 4*(len(m.CommonCaps)+len(m.ChannelCaps)) > len(body) {
				t.Fatalf("link message of %d bytes gave %d capability words", len(body), len(m.CommonCaps)+len(m.ChannelCaps))
			}
			again, err := ParseLinkMess(m.Marshal()[LinkHeaderSize:])
			if err != nil || !reflect.DeepEqual(again, m) {
				t.Fatalf("link message %+v marshals to %+v, %v", m, again, err)
			}
		}
		if r, err := parseLinkReply(body); err == nil {
			if 4*(len(r.CommonCaps)+len(r.ChannelCaps)) > len(body) {
				t.Fatalf("link reply of %d bytes gave %d capability words", len(body), len(r.CommonCaps)+len(r.ChannelCaps))
			}
			again, err := parseLinkReply(r.Marshal()[LinkHeaderSize:])
			if err != nil || !reflect.DeepEqual(again, r) {
				t.Fatalf("link reply %+v marshals to %+v, %v", r, again, err)
			}
		}
	})
}
