package spiceproto_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/shakenfist/quicbench/spicelike/spiceproto"
)

// A display channel's link stage and one draw, fed as a tunnel would feed
// them: each direction's bytes as they pass.
func Example() {
	caps := spiceproto.Caps(spiceproto.CapProtocolAuthSelection, spiceproto.CapAuthSpice, spiceproto.CapMiniHeader)
	c := spiceproto.NewConn()
	show := func(ms []spiceproto.Msg, err error) {
		if err != nil {
			fmt.Println(err)
		}
		for _, m := range ms {
			fmt.Printf("%v %s %s %d bytes", m.Dir, m.Stage, m.Name, m.Size)
			if m.Draw != nil {
				fmt.Printf(", box %+v on the primary surface: %v", m.Draw.Box, m.Draw.Primary)
			}
			fmt.Println()
		}
	}
	show(c.Feed(spiceproto.ClientToServer, spiceproto.LinkMess{ChannelType: spiceproto.ChannelDisplay, CommonCaps: caps}.Marshal()))
	show(c.Feed(spiceproto.ServerToClient, spiceproto.LinkReply{CommonCaps: caps}.Marshal()))
	// The client chooses SPICE authentication (a uint32 mechanism) and sends its ticket.
	mech := binary.LittleEndian.AppendUint32(nil, uint32(spiceproto.CapAuthSpice))
	show(c.Feed(spiceproto.ClientToServer, append(mech, make([]byte, spiceproto.TicketSize)...)))
	show(c.Feed(spiceproto.ServerToClient, []byte{0, 0, 0, 0})) // link result: OK

	// draw_fill on surface 0: box top 10, left 20, bottom 30, right 40, no clip.
	var body []byte
	for _, v := range []uint32{0, 10, 20, 30, 40} {
		body = binary.LittleEndian.AppendUint32(body, v)
	}
	body = append(body, 0)
	show(c.Feed(spiceproto.ServerToClient, spiceproto.AppendData(nil, c.MiniHeader(), 1, spiceproto.MsgDisplayDrawFill, body)))
	// Output:
	// c2s link link_mess 38 bytes
	// s2c link link_reply 198 bytes
	// c2s link auth_mechanism 4 bytes
	// c2s link ticket 128 bytes
	// s2c link link_result 4 bytes
	// s2c data draw_fill 27 bytes, box {Top:10 Left:20 Bottom:30 Right:40} on the primary surface: true
}

// A tunnel that routes each connection by its channel reads the client's
// link message before it relays anything, then sends the bytes it read on
// unchanged.
func ExampleParseLinkMess() {
	// The inputs channel's capabilities are numbered by the inputs channel
	// (spice-protocol's spice/protocol.h).
	const inputsCapKeyScancode spiceproto.Cap = 0
	client := bytes.NewReader(spiceproto.LinkMess{
		ChannelType: spiceproto.ChannelInputs,
		CommonCaps:  spiceproto.Caps(spiceproto.CapProtocolAuthSelection, spiceproto.CapAuthSpice, spiceproto.CapMiniHeader),
		ChannelCaps: spiceproto.Caps(inputsCapKeyScancode),
	}.Marshal())

	// readLink reads a link header and the link message it announces, and
	// returns the bytes read, to forward.
	readLink := func(r io.Reader) (spiceproto.LinkHeader, []byte, error) {
		hdr := make([]byte, spiceproto.LinkHeaderSize)
		if _, err := io.ReadFull(r, hdr); err != nil {
			return spiceproto.LinkHeader{}, nil, err
		}
		h, err := spiceproto.ParseLinkHeader(hdr)
		if err != nil {
			return h, hdr, err // not SPICE: relay it untouched, or refuse it
		}
		body := make([]byte, h.Size)
		_, err = io.ReadFull(r, body)
		return h, append(hdr, body...), err
	}
	h, raw, err := readLink(client)
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := spiceproto.ParseLinkMess(raw[spiceproto.LinkHeaderSize:])
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("SPICE %d.%d, %v channel %d, %d bytes to forward\n", h.Major, h.Minor, m.ChannelType, m.ChannelID, len(raw))
	fmt.Println("mini header:", spiceproto.HasCap(m.CommonCaps, spiceproto.CapMiniHeader))
	fmt.Println("SASL:", spiceproto.HasCap(m.CommonCaps, spiceproto.CapAuthSASL))
	fmt.Println("scancodes:", spiceproto.HasCap(m.ChannelCaps, inputsCapKeyScancode))
	// Output:
	// SPICE 2.2, inputs channel 0, 42 bytes to forward
	// mini header: true
	// SASL: false
	// scancodes: true
}

// After its ticket, the client reads the link result: a uint32 LinkErr,
// LinkErrOK when the channel is open.
func ExampleLinkErr() {
	result := []byte{7, 0, 0, 0} // what spice-server sends for a wrong ticket
	switch code := spiceproto.LinkErr(binary.LittleEndian.Uint32(result)); code {
	case spiceproto.LinkErrOK:
		fmt.Println("channel open")
	case spiceproto.LinkErrPermissionDenied:
		fmt.Println("wrong ticket")
	default:
		fmt.Println("refused with link error", code)
	}
	// Output:
	// wrong ticket
}

// Bytes that are not SPICE stop the parsing, not the connection: the
// tunnel keeps relaying them and learns whose bytes they were.
func ExampleFeedError() {
	c := spiceproto.NewConn()
	_, err := c.Feed(spiceproto.ClientToServer, []byte("GET / HTTP/1.1\r\nHost: spice\r\n\r\n"))
	fmt.Println("not SPICE:", errors.Is(err, spiceproto.ErrNotSpice))
	var fe *spiceproto.FeedError
	if errors.As(err, &fe) {
		fmt.Println("from the", fe.Dir)
	}
	// Every later Feed, of either direction, returns the same error.
	_, again := c.Feed(spiceproto.ServerToClient, []byte("HTTP/1.1 400 Bad Request\r\n"))
	fmt.Println("same error:", again == err)
	// Output:
	// not SPICE: true
	// from the c2s
	// same error: true
}

// A message type is a number per channel type and direction, as a trace
// records it: MessageName says which message it is.
func ExampleMessageName() {
	for _, m := range []struct {
		ch  spiceproto.ChannelType
		dir spiceproto.Direction
		typ spiceproto.MsgType
	}{
		{spiceproto.ChannelDisplay, spiceproto.ServerToClient, 101},
		{spiceproto.ChannelInputs, spiceproto.ClientToServer, 101},
		{spiceproto.ChannelMain, spiceproto.ServerToClient, 101},
		{spiceproto.ChannelInputs, spiceproto.ServerToClient, spiceproto.MsgPing},
	} {
		fmt.Printf("%v %v %d: %s\n", m.ch, m.dir, m.typ, spiceproto.MessageName(m.ch, m.dir, m.typ))
	}
	// Output:
	// display s2c 101: mode
	// inputs c2s 101: key_down
	// main s2c 101: migrate_begin
	// inputs s2c 4: ping
}
