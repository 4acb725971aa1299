package spiceproto_test

import (
	"encoding/binary"
	"fmt"

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
	show(c.Feed(spiceproto.ClientToServer, append(binary.LittleEndian.AppendUint32(nil, spiceproto.CapAuthSpice), make([]byte, spiceproto.TicketSize)...)))
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
